package engine_test

import (
	"slices"
	"testing"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

func TestUsage(t *testing.T) {
	cases := map[string]struct {
		reason                   string
		namespace, engine, class string
		bound                    []string
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
					"reason":         `FireboltEngine "reporting" uses this FireboltEngineClass`,
					"replayDeletion": false,
				},
			},
		},
		"OtherClass": {
			reason:    "Another class is another Usage, so switching deletes the old one instead of re-pointing it. A class whose list names only this engine adds nothing to the reason.",
			namespace: "analytics", engine: "reporting", class: "large", bound: []string{"reporting"},
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
					"reason":         `FireboltEngine "reporting" uses this FireboltEngineClass`,
					"replayDeletion": false,
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := engine.Usage(tc.namespace, tc.engine, tc.class, tc.bound)
			if diff := cmp.Diff(tc.want, got.UnstructuredContent()); diff != "" {
				t.Errorf("%s\nUsage(%q, %q, %q, %q): -want, +got:\n%s", tc.reason, tc.namespace, tc.engine, tc.class, tc.bound, diff)
			}
		})
	}
}

func TestUsageReason(t *testing.T) {
	many := []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08", "e09", "e10", "e11", "e12"}
	cases := map[string]struct {
		reason string
		engine string
		bound  []string
		want   string
	}{
		"Alone": {
			reason: "An engine alone names only itself.",
			engine: "reporting",
			want:   `FireboltEngine "reporting" uses this FireboltEngineClass`,
		},
		"Others": {
			reason: "The class's bound engines are named, sorted, so whichever Usage Crossplane quotes names them all.",
			engine: "reporting", bound: []string{"etl", "adhoc", "reporting"},
			want: `FireboltEngine "reporting" uses this FireboltEngineClass (bound engines: "adhoc", "etl", "reporting")`,
		},
		"ListBehind": {
			reason: "An engine the class has not counted yet is named too.",
			engine: "reporting", bound: []string{"etl"},
			want: `FireboltEngine "reporting" uses this FireboltEngineClass (bound engines: "etl", "reporting")`,
		},
		"Many": {
			reason: "At most ten are named; the rest are counted.",
			engine: "e05", bound: many,
			want: `FireboltEngine "e05" uses this FireboltEngineClass (bound engines: "e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08", "e09", "e10" and 2 more)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := slices.Clone(tc.bound)
			if got := engine.UsageReason(tc.engine, tc.bound); got != tc.want {
				t.Errorf("%s\nUsageReason(%q, %q):\n got %s\nwant %s", tc.reason, tc.engine, tc.bound, got, tc.want)
			}
			if !slices.Equal(before, tc.bound) {
				t.Errorf("UsageReason changed its argument: %q, was %q", tc.bound, before)
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
