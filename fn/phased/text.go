package phased

import "strings"

// Bounds on what a status or event repeats from outside.
const (
	// maxMessage bounds a check message in status and events, so a
	// Prometheus error body cannot grow the composite.
	maxMessage = 256
	// maxRevision is the longest object name, so the longest revision
	// name the StatefulSet controller writes.
	maxRevision = 253
	// maxTime is longer than any RFC 3339 time; a longer value is not
	// parsed at all.
	maxTime = 64
)

const ellipsis = "…"

// clip makes s valid UTF-8 of at most maxMessage bytes, marked when cut.
// clip(clip(s)) == clip(s), so a message read back from status is stable.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessage-len(ellipsis)], "") + ellipsis
}
