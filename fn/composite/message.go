package composite

import (
	"strings"
	"unicode/utf8"
)

// MaxMessageBytes bounds every condition message and event the function
// writes. Their text often quotes what a pod, an event or a user supplied
// (a scrape error, a Warning event, a rejected template, a check's
// answer); Kubernetes limits some of these fields and Crossplane copies
// them onto claims and events, so an unbounded one could make a status
// write fail or flood an event stream.
const MaxMessageBytes = 1024

// truncated marks a message cut by BoundMessage.
const truncated = " …[truncated]"

// BoundMessage returns s as valid UTF-8 of at most MaxMessageBytes bytes.
// A longer s is cut on a rune boundary and ends with a truncation mark.
// Write applies it to every condition and result, so it holds for every
// composer.
func BoundMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxMessageBytes {
		return s
	}
	cut := MaxMessageBytes - len(truncated)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncated
}
