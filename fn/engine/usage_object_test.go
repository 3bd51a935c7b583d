package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

func TestUsage(t *testing.T) {
	cases := map[string]struct {
		reason                   string
		namespace, engine, class string
		want                     map[string]any
	}{
		"EngineUsesClass": {
			reason:    "A namespaced protection.crossplane.io Usage of the class claim, named after the engine and the class, whose reason names the engine so Crossplane's refusal does; a refused deletion is not replayed later.",
			namespace: "firebolt", engine: "reporting", class: "standard",
			want: map[string]any{
				"apiVersion": "protection.crossplane.io/v1beta1",
				"kind":       "Usage",
				"metadata": map[string]any{
					"name":      "reporting-engineclass-fe6d3468",
					"namespace": "firebolt",
					"labels":    map[string]any{"firebolt.io/engine": "reporting", "firebolt.io/engine-class": "standard"},
				},
				"spec": map[string]any{
					"of": map[string]any{
						"apiVersion":  "compute.firebolt.io/v1alpha1",
						"kind":        "FireboltEngineClass",
						"resourceRef": map[string]any{"name": "standard"},
					},
					"reason":         `FireboltEngine "reporting" uses FireboltEngineClass "standard"; the class's status.boundEngineNames lists every engine bound to it`,
					"replayDeletion": false,
				},
			},
		},
		"OtherClass": {
			reason:    "Another class is another Usage, so switching deletes the old one instead of re-pointing it.",
			namespace: "analytics", engine: "reporting", class: "large",
			want: map[string]any{
				"apiVersion": "protection.crossplane.io/v1beta1",
				"kind":       "Usage",
				"metadata": map[string]any{
					"name":      "reporting-engineclass-d35c416a",
					"namespace": "analytics",
					"labels":    map[string]any{"firebolt.io/engine": "reporting", "firebolt.io/engine-class": "large"},
				},
				"spec": map[string]any{
					"of": map[string]any{
						"apiVersion":  "compute.firebolt.io/v1alpha1",
						"kind":        "FireboltEngineClass",
						"resourceRef": map[string]any{"name": "large"},
					},
					"reason":         `FireboltEngine "reporting" uses FireboltEngineClass "large"; the class's status.boundEngineNames lists every engine bound to it`,
					"replayDeletion": false,
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := engine.Usage(tc.namespace, tc.engine, tc.class)
			if diff := cmp.Diff(tc.want, got.UnstructuredContent()); diff != "" {
				t.Errorf("%s\nUsage(%q, %q, %q): -want, +got:\n%s", tc.reason, tc.namespace, tc.engine, tc.class, diff)
			}
		})
	}
}

func TestUsageResourceName(t *testing.T) {
	a, b := engine.UsageResourceName("standard"), engine.UsageResourceName("large")
	if a == b {
		t.Errorf("two classes share the resource name %q", a)
	}
	for _, n := range []string{string(a), string(b)} {
		if !engine.IsUsageResourceName(resourceName(n)) {
			t.Errorf("IsUsageResourceName(%q) = false", n)
		}
	}
	if engine.IsUsageResourceName("g0-statefulset") {
		t.Error("a generation's resource name is taken for a Usage")
	}
}

func resourceName(s string) resource.Name { return resource.Name(s) }
