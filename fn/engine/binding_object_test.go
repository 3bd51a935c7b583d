package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

func TestBinding(t *testing.T) {
	cases := map[string]struct {
		reason                   string
		namespace, engine, class string
		want                     map[string]any
	}{
		"EngineNamesClass": {
			reason:    "A ConfigMap in the engine's namespace, named after the engine and the class, labelled with both: the class selects and counts it.",
			namespace: "firebolt", engine: "reporting", class: "standard",
			want: bindingObject("reporting-engineclass-fe6d3468", "firebolt", "reporting", "standard"),
		},
		"OtherClass": {
			reason:    "Another class is another binding, so switching deletes the old one instead of re-pointing it.",
			namespace: "analytics", engine: "reporting", class: "large",
			want: bindingObject("reporting-engineclass-d35c416a", "analytics", "reporting", "large"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := engine.Binding(tc.namespace, tc.engine, tc.class)
			if diff := cmp.Diff(tc.want, got.UnstructuredContent()); diff != "" {
				t.Errorf("%s\nBinding(%q, %q, %q): -want, +got:\n%s", tc.reason, tc.namespace, tc.engine, tc.class, diff)
			}
		})
	}
}

// bindingObject is the binding ConfigMap, spelled out.
func bindingObject(name, namespace, engine, class string) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      name,
			"namespace": namespace,
			"labels":    map[string]any{"firebolt.io/engine": engine, "firebolt.io/engine-class-binding": class},
		},
		"data": map[string]any{"engine": engine, "engineClass": class},
	}
}

func TestBindingResourceName(t *testing.T) {
	a, b := engine.BindingResourceName("standard"), engine.BindingResourceName("large")
	if a == b {
		t.Errorf("two classes share the resource name %q", a)
	}
	for _, n := range []string{string(a), string(b)} {
		if !engine.IsBindingResourceName(resourceName(n)) {
			t.Errorf("IsBindingResourceName(%q) = false", n)
		}
	}
	if engine.IsBindingResourceName("g0-statefulset") {
		t.Error("a generation's resource name is taken for a binding")
	}
}

func resourceName(s string) resource.Name { return resource.Name(s) }
