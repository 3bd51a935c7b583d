// Package markdown holds what the docs generator and the docs' link check
// must agree on about GitHub-flavoured markdown.
package markdown

import (
	"strconv"
	"strings"
	"unicode"
)

// Anchor is the id GitHub gives a heading's text: lower case, spaces to
// hyphens, and every character but letters, digits, hyphens and
// underscores dropped (so code spans lose their backticks). A second
// heading with the same id gets "-1" appended, a third "-2": Anchors does
// that for a page.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Anchors are the ids of a page's headings (ATX headings outside fenced
// code blocks), in order, duplicates numbered as GitHub numbers them.
func Anchors(page string) []string {
	var out []string
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(trimmed, fence):
				fence = ""
			}
			continue
		}
		if fence != "" || len(line)-len(trimmed) > 3 {
			continue
		}
		text, ok := headingText(trimmed)
		if !ok {
			continue
		}
		id := Anchor(text)
		if n := seen[id]; n > 0 {
			out = append(out, id+"-"+strconv.Itoa(n))
		} else {
			out = append(out, id)
		}
		seen[id]++
	}
	return out
}

// fenceOf is the fence a line opens or closes: three or more backticks or
// tildes; "" for another line.
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// headingText is the text of an ATX heading (1 to 6 #, then a space),
// without a closing run of #.
func headingText(line string) (string, bool) {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n < 1 || n > 6 || (len(line) > n && line[n] != ' ') {
		return "", false
	}
	text := strings.TrimSpace(line[n:])
	if t := strings.TrimRight(text, "#"); t != text && (t == "" || strings.HasSuffix(t, " ")) {
		text = strings.TrimSpace(t)
	}
	return text, true
}
