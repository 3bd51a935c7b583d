package autostop

import "unicode/utf8"

// maxQuoted bounds how much of a value from outside (an annotation, a field
// that bypassed admission, a scrape error) is repeated in a message, so a
// hostile value cannot grow a status, condition or event.
const maxQuoted = 64

// clip returns s cut to maxQuoted bytes on a rune boundary, marked with an
// ellipsis when cut.
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
