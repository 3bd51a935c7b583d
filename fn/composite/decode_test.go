package composite

import (
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
