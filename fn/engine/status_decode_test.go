package engine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// TestDecodeStatusAsJSONDoes wants decodeStatus to decode, or fail on,
// every status exactly as the JSON round trip does.
func TestDecodeStatusAsJSONDoes(t *testing.T) {
	item := func(gen any) map[string]any { return map[string]any{"generation": gen, "hash": "h", "objects": "o"} }
	cases := map[string]any{
		"Plain":           map[string]any{"phase": "stable", "activeGeneration": float64(2), "renderings": []any{item(float64(1)), item(float64(2))}},
		"NoRenderings":    map[string]any{"phase": "stable"},
		"EmptyRenderings": map[string]any{"phase": "stable", "renderings": []any{}},
		"NullRenderings":  map[string]any{"phase": "stable", "renderings": nil},
		"OnlyRenderings":  map[string]any{"renderings": []any{item(float64(0))}},
		"FractionalGen":   map[string]any{"renderings": []any{item(1.5)}},
		"StringGen":       map[string]any{"renderings": []any{item("1")}},
		"HugeGen":         map[string]any{"renderings": []any{item(1e300)}},
		"NegativeGen":     map[string]any{"renderings": []any{item(float64(-3))}},
		"ExtraKey":        map[string]any{"renderings": []any{map[string]any{"generation": float64(1), "hash": "h", "objects": "o", "x": "y"}}},
		"MissingKey":      map[string]any{"renderings": []any{map[string]any{"generation": float64(1), "hash": "h", "x": "o"}}},
		"NullHash":        map[string]any{"renderings": []any{map[string]any{"generation": float64(1), "hash": nil, "objects": "o"}}},
		"NotAList":        map[string]any{"renderings": "nope"},
		"ItemNotAnObject": map[string]any{"renderings": []any{"nope"}},
		"OtherCase":       map[string]any{"Renderings": []any{item(float64(7))}, "renderings": []any{item(float64(1))}},
		"BadPhase":        map[string]any{"phase": float64(1), "renderings": []any{item(float64(1))}},
		"StatusNotObject": "nope",
		"StatusNull":      nil,
	}
	for name, st := range cases {
		t.Run(name, func(t *testing.T) {
			obj := map[string]any{"status": st}
			var want, got v1alpha1.FireboltEngineStatus
			wantErr := decodeField(obj, "status", &want)
			gotErr := decodeStatus(obj, &got)
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Errorf("error: want %v, got %v", wantErr, gotErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("-want (JSON), +got:\n%s", diff)
			}
		})
	}
}

// TestStatusMapAsJSONDoes wants statusMap to give what the JSON round trip
// gives.
func TestStatusMapAsJSONDoes(t *testing.T) {
	d := 3
	cases := map[string]v1alpha1.FireboltEngineStatus{
		"Empty":           {},
		"NoRenderings":    {Phase: "stable", ActiveGeneration: 1, CurrentGeneration: 1},
		"EmptyRenderings": {Phase: "stable", Renderings: []v1alpha1.GenerationRendering{}},
		"Renderings": {Phase: "draining", DrainingGeneration: &d, Renderings: []v1alpha1.GenerationRendering{
			{Generation: 3, Hash: "a", Objects: "b"}, {Generation: 4, Hash: "", Objects: ""}, {Generation: 1 << 40, Hash: "<&>", Objects: "\u2028"},
		}},
	}
	for name, st := range cases {
		t.Run(name, func(t *testing.T) {
			want, wantErr := toMap(st)
			got, gotErr := statusMap(st)
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Errorf("error: want %v, got %v", wantErr, gotErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("-want (JSON), +got:\n%s", diff)
			}
		})
	}
}
