package composite

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

func TestRequiredNamed(t *testing.T) {
	item := func(t *testing.T, name any, replicas float64) *fnv1.Resource {
		t.Helper()
		s, err := structpb.NewStruct(map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": replicas}})
		if err != nil {
			t.Fatal(err)
		}
		return &fnv1.Resource{Resource: s}
	}
	obj := func(name string, replicas float64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": replicas}}}
	}
	cases := map[string]struct {
		reason       string
		items        func(t *testing.T) map[string]*fnv1.Resources
		name         string
		want         *unstructured.Unstructured
		wantResolved bool
	}{
		"NotFetched": {
			reason: "Without the requirement in the request nothing is resolved.",
			items:  func(*testing.T) map[string]*fnv1.Resources { return nil },
			name:   "inst",
		},
		"FetchedNone": {
			reason:       "Fetched and absent.",
			items:        func(*testing.T) map[string]*fnv1.Resources { return map[string]*fnv1.Resources{"instance": {}} },
			name:         "inst",
			wantResolved: true,
		},
		"FirstOfTheName": {
			reason: "A stale item of another name is skipped, and so is a name that is not a string; the first of the name is picked whole.",
			items: func(t *testing.T) map[string]*fnv1.Resources {
				return map[string]*fnv1.Resources{"instance": {Items: []*fnv1.Resource{
					{}, item(t, "old", 1), item(t, []any{"inst"}, 2), item(t, "inst", 3), item(t, "inst", 4),
				}}}
			},
			name:         "inst",
			want:         obj("inst", 3),
			wantResolved: true,
		},
		"OtherRequirement": {
			reason: "Only the named requirement's items count.",
			items: func(t *testing.T) map[string]*fnv1.Resources {
				return map[string]*fnv1.Resources{"class": {Items: []*fnv1.Resource{item(t, "inst", 1)}}}
			},
			name: "inst",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, resolved, err := RequiredNamed(&fnv1.RunFunctionRequest{RequiredResources: tc.items(t)}, "instance", "FireboltInstance", tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if resolved != tc.wantResolved {
				t.Errorf("%s\nresolved: want %t, got %t", tc.reason, tc.wantResolved, resolved)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRequiredNamed: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDecodeIsTheJSONRoundTrip: DecodeField and DecodeStructValue decode,
// and fail, exactly as encoding the value with json.Marshal and decoding
// it does, error text included (users read it in conditions).
func TestDecodeIsTheJSONRoundTrip(t *testing.T) {
	type spec struct {
		Replicas int32             `json:"replicas"`
		Name     string            `json:"name,omitempty"`
		Labels   map[string]string `json:"labels,omitempty"`
	}
	values := map[string]any{
		"Plain":           map[string]any{"replicas": 2.0, "name": "<a&b>", "labels": map[string]any{"k": "v"}, "unknown": []any{true, nil}},
		"HugeNumber":      map[string]any{"replicas": 1e21},
		"Fraction":        map[string]any{"replicas": 2.5},
		"WrongType":       map[string]any{"replicas": "two"},
		"CaseInsensitive": map[string]any{"Replicas": 3.0, "replicas": 4.0},
		"NotAnObject":     []any{1.0},
		"Null":            nil,
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			want, wantErr := spec{Name: "kept"}, error(nil)
			if v != nil {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				wantErr = json.Unmarshal(b, &want)
			}
			got := spec{Name: "kept"}
			err := DecodeField(map[string]any{"spec": v}, "spec", &got)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("DecodeField error: want %v, got %v", wantErr, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecodeField: -want, +got:\n%s", diff)
			}
			sv, err := structpb.NewValue(v)
			if err != nil {
				t.Fatal(err)
			}
			got = spec{Name: "kept"}
			err = DecodeStructValue(sv, &got)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("DecodeStructValue error: want %v, got %v", wantErr, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecodeStructValue: -want, +got:\n%s", diff)
			}
		})
	}
	var got spec
	if err := DecodeField(map[string]any{"spec": map[string]any{"replicas": math.NaN()}}, "spec", &got); err == nil || !strings.Contains(err.Error(), "unsupported value: NaN") {
		t.Errorf("NaN: want json's unsupported value error, got %v", err)
	}
	// AsInterface turns what JSON cannot carry into strings.
	inf := structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"replicas": structpb.NewNumberValue(math.Inf(1))}})
	b, err := json.Marshal(inf.AsInterface())
	if err != nil {
		t.Fatal(err)
	}
	wantErr := json.Unmarshal(b, &spec{})
	if err := DecodeStructValue(inf, &got); wantErr == nil || fmt.Sprint(err) != wantErr.Error() {
		t.Errorf("+Inf: want %v, got %v", wantErr, err)
	}
}
