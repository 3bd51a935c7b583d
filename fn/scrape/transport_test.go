package scrape

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSnippet(t *testing.T) {
	cases := map[string]struct {
		reason string
		body   string
		want   string
	}{
		"Empty": {
			reason: "Whitespace alone is no snippet.",
			body:   " \n\t",
			want:   "",
		},
		"Quoted": {
			reason: "Control characters are escaped so a condition message stays one line.",
			body:   "bad\x1b[31m\nthing\n",
			want:   `"bad\x1b[31m\nthing"`,
		},
		"InvalidUTF8": {
			reason: "Invalid UTF-8 is replaced, not passed on.",
			body:   "a\xffb",
			want:   `"a` + "\uFFFD" + `b"`,
		},
		"CutOnRuneBoundary": {
			reason: "A long body is cut to the bound without splitting a character.",
			body:   strings.Repeat("a", errorSnippetBytes-1) + "é" + "tail",
			want:   `"` + strings.Repeat("a", errorSnippetBytes-1) + `…"`,
		},
		"StatusMessage": {
			reason: "An API server Status is reduced to its message.",
			body:   `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"x\" not found","code":404}`,
			want:   `"pods \"x\" not found"`,
		},
		"OtherJSON": {
			reason: "JSON that is not a Status is quoted as it is.",
			body:   `{"kind":"Pod"}`,
			want:   `"{\"kind\":\"Pod\"}"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, snippet([]byte(tc.body))); diff != "" {
				t.Errorf("%s\nsnippet(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDrainWithoutKubernetesClient(t *testing.T) {
	cases := map[string]struct {
		reason string
		mode   Mode
		want   Verdict
	}{
		"ApiserverProxy": {
			reason: "Without a clientset the check fails closed.",
			mode:   ModeApiserverProxy,
			want:   Verdict{Failing: true, Message: "cannot check drain: no Kubernetes client configured"},
		},
		"PodIP": {
			reason: "PodIP mode still lists pods through the API server, so it fails closed too.",
			mode:   ModePodIP,
			want:   Verdict{Failing: true, Message: "cannot check drain: no Kubernetes client configured"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := New(nil, nil, Options{Mode: tc.mode}).Drain(context.Background(), testNamespace, testSelector)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDrain(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
