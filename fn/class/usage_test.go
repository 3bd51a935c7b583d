package class_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/fn/class"
)

func TestUsage(t *testing.T) {
	cases := map[string]struct {
		reason                   string
		namespace, engine, class string
		want                     map[string]any
	}{
		"EngineUsesClass": {
			reason:    "A namespaced protection.crossplane.io Usage of the class claim, named after the engine, whose reason names the engine so Crossplane's refusal does; deletion is replayed once the last Usage goes.",
			namespace: "firebolt", engine: "reporting", class: "standard",
			want: map[string]any{
				"apiVersion": "protection.crossplane.io/v1beta1",
				"kind":       "Usage",
				"metadata": map[string]any{
					"name":      "reporting-engineclass",
					"namespace": "firebolt",
					"labels":    map[string]any{"firebolt.io/engine": "reporting", "firebolt.io/engine-class": "standard"},
				},
				"spec": map[string]any{
					"of": map[string]any{
						"apiVersion":  "compute.firebolt.io/v1alpha1",
						"kind":        "FireboltEngineClass",
						"resourceRef": map[string]any{"name": "standard"},
					},
					"reason":         `FireboltEngine "reporting" uses this FireboltEngineClass`,
					"replayDeletion": true,
				},
			},
		},
		"OtherClassSameName": {
			reason:    "Switching class keeps the Usage's name (Crossplane keeps the first name under a resource name) and moves only spec.of.",
			namespace: "analytics", engine: "reporting", class: "large",
			want: map[string]any{
				"apiVersion": "protection.crossplane.io/v1beta1",
				"kind":       "Usage",
				"metadata": map[string]any{
					"name":      "reporting-engineclass",
					"namespace": "analytics",
					"labels":    map[string]any{"firebolt.io/engine": "reporting", "firebolt.io/engine-class": "large"},
				},
				"spec": map[string]any{
					"of": map[string]any{
						"apiVersion":  "compute.firebolt.io/v1alpha1",
						"kind":        "FireboltEngineClass",
						"resourceRef": map[string]any{"name": "large"},
					},
					"reason":         `FireboltEngine "reporting" uses this FireboltEngineClass`,
					"replayDeletion": true,
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := class.Usage(tc.namespace, tc.engine, tc.class)
			if diff := cmp.Diff(tc.want, got.UnstructuredContent()); diff != "" {
				t.Errorf("%s\nUsage(%q, %q, %q): -want, +got:\n%s", tc.reason, tc.namespace, tc.engine, tc.class, diff)
			}
		})
	}
}
