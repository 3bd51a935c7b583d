package composite

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestBoundMessage shows that a message is cut to MaxMessageBytes on a rune
// boundary, marked, and always valid UTF-8.
func TestBoundMessage(t *testing.T) {
	keep := MaxMessageBytes - len(truncated)
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"Short": {
			reason: "A short message is kept as it is.",
			in:     "drain check of generation 0 is failing",
			want:   "drain check of generation 0 is failing",
		},
		"AtTheLimit": {
			reason: "A message of exactly MaxMessageBytes is kept whole.",
			in:     strings.Repeat("x", MaxMessageBytes),
			want:   strings.Repeat("x", MaxMessageBytes),
		},
		"OneByteOver": {
			reason: "One byte over the limit is cut and marked.",
			in:     strings.Repeat("x", MaxMessageBytes+1),
			want:   strings.Repeat("x", keep) + truncated,
		},
		"CutInsideARune": {
			reason: "A cut that would split a multi-byte rune backs off to the rune's start.",
			in:     strings.Repeat("x", keep-1) + "€" + strings.Repeat("y", 100),
			want:   strings.Repeat("x", keep-1) + truncated,
		},
		"InvalidUTF8": {
			reason: "Bytes that are not UTF-8 are replaced, so the message is always valid.",
			in:     "pod p: \xff\xfe",
			want:   "pod p: \uFFFD",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := BoundMessage(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nBoundMessage(...): -want, +got:\n%s", tc.reason, diff)
			}
			if len(got) > MaxMessageBytes || !utf8.ValidString(got) {
				t.Errorf("%s\nBoundMessage(...) is %d bytes, valid UTF-8 %v", tc.reason, len(got), utf8.ValidString(got))
			}
		})
	}
}
