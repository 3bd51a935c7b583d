package promcheck

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxMessageBytes bounds Outcome.Message: it lands in a status field, next
// to many others, on every check.
const MaxMessageBytes = 256

// ellipsis marks a message cut to MaxMessageBytes.
const ellipsis = "…"

// finish makes msg safe to show: no credential value, no control
// character, valid UTF-8, at most MaxMessageBytes. The text comes in part
// from the server, which sees the credentials and may echo them (an error
// page quoting the request's headers), so values are scrubbed before the
// message is cut: a cut through a value would leave its prefix behind.
// They are scrubbed before invalid UTF-8 is replaced, as a value may hold
// bytes that are not UTF-8, and again after control characters become
// spaces, in case the server wrote a value with one inside.
func finish(msg string, creds Credentials) string {
	needles := scrubForms(creds.secrets())
	msg = scrub(msg, needles)
	msg = scrub(printable(strings.ToValidUTF8(msg, "\uFFFD")), needles)
	return clip(msg)
}

// scrubForms adds the escaped forms a server may echo a value in (a JSON
// string, a URL) to the values themselves.
func scrubForms(values []string) []string {
	var out []string
	for _, v := range values {
		out = append(out, v, url.QueryEscape(v), url.PathEscape(v))
		if b, err := json.Marshal(v); err == nil {
			out = append(out, string(b[1:len(b)-1]))
		}
	}
	return out
}

// scrub replaces every stretch of s covered by a needle with one marker.
// Matches are found in the original before anything is replaced, so a short
// value is never looked for inside a marker, and overlapping values leave
// no piece of either.
func scrub(s string, needles []string) string {
	covered := make([]bool, len(s))
	found := false
	for _, n := range needles {
		for from := 0; from < len(s); {
			i := strings.Index(s[from:], n)
			if i < 0 {
				break
			}
			for j := from + i; j < from+i+len(n); j++ {
				covered[j] = true
			}
			found = true
			from += i + 1
		}
	}
	if !found {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case !covered[i]:
			b.WriteByte(s[i])
		case i == 0 || !covered[i-1]:
			b.WriteString(redacted)
		}
	}
	return b.String()
}

// printable turns every run of control, format (bidirectional overrides,
// zero-width characters) and space characters into one space, so a body's
// newlines make a readable line, and trims both ends.
func printable(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// clip cuts s to MaxMessageBytes on a rune boundary, marked with an
// ellipsis.
func clip(s string) string {
	if len(s) <= MaxMessageBytes {
		return s
	}
	cut := MaxMessageBytes - len(ellipsis)
	for !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
