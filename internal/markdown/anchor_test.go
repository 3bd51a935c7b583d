package markdown

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnchor(t *testing.T) {
	cases := map[string]struct{ heading, want string }{
		"words":          {"How an engine rolls", "how-an-engine-rolls"},
		"code and colon": {"Waiting for a rollout: `status.observedGeneration`", "waiting-for-a-rollout-statusobservedgeneration"},
		"punctuation":    {"No cluster? `make up`", "no-cluster-make-up"},
		"apostrophe":     {"Writes, watch events and Crossplane's circuit breaker", "writes-watch-events-and-crossplanes-circuit-breaker"},
		"ellipsis":       {"Scale: `make scale N=…`", "scale-make-scale-n"},
		"underscore":     {"The function's metrics (`function_firebolt_*`)", "the-functions-metrics-function_firebolt_"},
		"hyphen kept":    {"Auto-stop", "auto-stop"},
		"non-ascii":      {"Über Größe", "über-größe"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Anchor(tc.heading); got != tc.want {
				t.Errorf("Anchor(%q) = %q, want %q", tc.heading, got, tc.want)
			}
		})
	}
}

func TestAnchors(t *testing.T) {
	page := "# Title\n\ntext # not a heading\n## Twice ##\n\n## Twice\n\n### Twice\n" +
		"```sh\n# a comment\n```\n~~~\n## fenced\n~~~\n    # indented code\n#nospace\n####### seven\n## C# and F#\n"
	want := []string{"title", "twice", "twice-1", "twice-2", "c-and-f"}
	if diff := cmp.Diff(want, Anchors(page)); diff != "" {
		t.Errorf("Anchors (-want +got):\n%s", diff)
	}
}
