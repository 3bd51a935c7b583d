package class_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/fn/class"
)

func TestSpecConfigMap(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   map[string]any
	}{
		"Verbatim": {
			reason: "The spec's own fields as the composite holds them: a quantity keeps its spelling, so an engine renders exactly what it rendered from the claim.",
			spec: map[string]any{
				"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "engine",
					"resources": map[string]any{"requests": map[string]any{"cpu": "1000m"}}}}}},
				"rollout":            "recreate",
				"drainCheckInterval": "5s",
				"customEngineConfig": map[string]any{"b": float64(1), "a": true},
			},
			want: map[string]any{"spec": `{"customEngineConfig":{"a":true,"b":1},"drainCheckInterval":"5s","rollout":"recreate",` +
				`"template":{"spec":{"containers":[{"name":"engine","resources":{"requests":{"cpu":"1000m"}}}]}}}`},
		},
		"CrossplaneFieldsLeftOut": {
			reason: "Crossplane's fields change when the class composes (resourceRefs gains this very ConfigMap), not when its spec does.",
			spec: map[string]any{
				"template":       map[string]any{},
				"claimRef":       map[string]any{"name": "standard"},
				"resourceRefs":   []any{map[string]any{"kind": "ConfigMap", "name": "standard-engineclass"}},
				"compositionRef": map[string]any{"name": "x"},
				"crossplane":     map[string]any{"compositionRef": map[string]any{"name": "x"}},
			},
			want: map[string]any{"spec": `{"template":{}}`},
		},
		"AtTheLimit": {
			reason: "A spec of exactly what a ConfigMap holds, beside its key, is published.",
			spec:   map[string]any{"customEngineConfig": map[string]any{"x": strings.Repeat("x", 1<<20-len("spec")-31)}},
			want:   map[string]any{"spec": `{"customEngineConfig":{"x":"` + strings.Repeat("x", 1<<20-len("spec")-31) + `"}}`},
		},
		"TooLarge": {
			reason: "A spec longer than a ConfigMap holds (the API server admits objects up to etcd's 1.5 MiB) is not published; the ConfigMap says why, for the engines to report.",
			spec:   map[string]any{"template": map[string]any{}, "customEngineConfig": map[string]any{"x": huge}},
			want:   map[string]any{"error": "spec is 1048621 bytes as JSON, more than the 1048572 a ConfigMap holds"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := class.SpecConfigMap("firebolt", "standard", class.PublishSpec(tc.spec))
			want := map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "standard-engineclass", "namespace": "firebolt",
					"labels": map[string]any{"firebolt.io/engine-class": "standard"}},
				"data": tc.want,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nSpecConfigMap: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
