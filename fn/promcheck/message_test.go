package promcheck

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// TestFinish shows how a message is made safe, case by case.
func TestFinish(t *testing.T) {
	basic := newCredentials(credentialValues{username: "ann", password: "annpass"})
	cases := map[string]struct {
		msg   string
		creds Credentials
		want  string
	}{
		"Plain":               {msg: "returned 1 series", want: "returned 1 series"},
		"ControlsBecomeOne":   {msg: " a\r\n\t\x00b\x1b[0m\u202ec\u200b ", want: "a b [0m c"},
		"InvalidUTF8":         {msg: "a\xffb", want: "a\uFFFDb"},
		"ValueNotUTF8":        {msg: "x pa\xffss y", creds: newCredentials(credentialValues{token: "pa\xffss"}), want: "x [redacted] y"},
		"OverlappingValues":   {msg: "x annpass y ann z", creds: basic, want: "x [redacted] y [redacted] z"},
		"AdjacentValues":      {msg: "annannpass", creds: basic, want: "[redacted]"},
		"NotInsideMarker":     {msg: "a", creds: newCredentials(credentialValues{token: "d"}), want: "a"},
		"URLEscaped":          {msg: "?p=a+b%26c", creds: newCredentials(credentialValues{token: "a b&c"}), want: "?p=[redacted]"},
		"PathEscaped":         {msg: "/a%20b&c", creds: newCredentials(credentialValues{token: "a b&c"}), want: "/[redacted]"},
		"CutOnRuneBoundary":   {msg: strings.Repeat("a", MaxMessageBytes-4) + "ééé", want: strings.Repeat("a", MaxMessageBytes-4) + ellipsis},
		"ExactlyAtTheLimit":   {msg: strings.Repeat("a", MaxMessageBytes), want: strings.Repeat("a", MaxMessageBytes)},
		"OneByteOverTheLimit": {msg: strings.Repeat("a", MaxMessageBytes+1), want: strings.Repeat("a", MaxMessageBytes-len(ellipsis)) + ellipsis},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := finish(tc.msg, tc.creds); got != tc.want {
				t.Errorf("finish(%q) = %q, want %q", tc.msg, got, tc.want)
			}
		})
	}
}

// TestFinishProperties checks, over random messages that quote random
// credentials among random text (control characters, multi-byte runes,
// pieces of the marker), what finish promises: no value, no control
// character, valid UTF-8, at most MaxMessageBytes.
func TestFinishProperties(t *testing.T) {
	valueRune := rapid.SampledFrom([]rune("abcdefghijklmnopqrstuvwxyz0123456789-_.+/= \"\\é"))
	textRune := rapid.SampledFrom([]rune("ab xyz[]red\r\n\t\x00\x1b\u202eé€😀\\\"%+"))
	rapid.Check(t, func(rt *rapid.T) {
		v := credentialValues{password: string(rapid.SliceOfN(valueRune, 8, 24).Draw(rt, "password"))}
		if rapid.Bool().Draw(rt, "basic") {
			v.username = string(rapid.SliceOfN(valueRune, 8, 24).Draw(rt, "username"))
		} else {
			v.token, v.password = v.password, ""
		}
		creds := newCredentials(v)
		// A value inside the marker cannot be told from the marker; the
		// values' runes hold no bracket, so none can straddle one.
		for _, s := range creds.secrets() {
			if strings.Contains(redacted, s) {
				rt.Skip("value is part of the marker")
			}
		}
		var b strings.Builder
		for range rapid.IntRange(0, 12).Draw(rt, "pieces") {
			if rapid.Bool().Draw(rt, "quote") {
				secrets := creds.secrets()
				b.WriteString(secrets[rapid.IntRange(0, len(secrets)-1).Draw(rt, "which")])
				continue
			}
			b.WriteString(string(rapid.SliceOfN(textRune, 0, 60).Draw(rt, "text")))
		}
		got := finish(b.String(), creds)
		for _, s := range creds.secrets() {
			if strings.Contains(got, s) {
				rt.Fatalf("finish(%q) = %q holds %q", b.String(), got, s)
			}
		}
		if len(got) > MaxMessageBytes || !utf8.ValidString(got) {
			rt.Fatalf("finish(%q) = %q: not valid UTF-8 of at most %d bytes", b.String(), got, MaxMessageBytes)
		}
		if i := strings.IndexFunc(got, unicode.IsControl); i >= 0 {
			rt.Fatalf("finish(%q) = %q: control character at %d", b.String(), got, i)
		}
	})
}
