package claimgen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

type spec struct {
	Replicas int32          `json:"replicas"`
	Config   map[string]any `json:"config,omitempty"`
}

func claimItem(t *testing.T, name string, gen float64, sp map[string]any) *fnv1.Resource {
	t.Helper()
	s, err := structpb.NewStruct(map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngine",
		"metadata": map[string]any{"name": name, "namespace": "firebolt", "generation": gen},
		"spec":     sp,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fnv1.Resource{Resource: s}
}

func TestRead(t *testing.T) {
	xr := spec{Replicas: 2, Config: map[string]any{"a": map[string]any{"b": 1.0}}}
	cases := map[string]struct {
		reason string
		req    func(t *testing.T) *fnv1.RunFunctionRequest
		want   Claim
	}{
		"NotFetched": {
			reason: "Without the requirement in the request the claim is not resolved.",
			req:    func(*testing.T) *fnv1.RunFunctionRequest { return &fnv1.RunFunctionRequest{} },
			want:   Claim{},
		},
		"NotFound": {
			reason: "Fetched and absent.",
			req: func(*testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{Requirement: {}}}
			},
			want: Claim{Resolved: true},
		},
		"SameSpec": {
			reason: "Crossplane's own spec fields (resourceRef) do not count; the generation is the claim's.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{Requirement: {Items: []*fnv1.Resource{
					claimItem(t, "demo", 3, map[string]any{"replicas": 2.0, "config": map[string]any{"a": map[string]any{"b": 1.0}}, "resourceRef": map[string]any{"name": "demo-x7k2p"}}),
				}}}}
			},
			want: Claim{Resolved: true, Found: true, Generation: 3, SpecMatches: true},
		},
		"OtherSpec": {
			reason: "A claim edit not synced into the composite yet.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{Requirement: {Items: []*fnv1.Resource{
					claimItem(t, "demo", 4, map[string]any{"replicas": 3.0, "config": map[string]any{"a": map[string]any{"b": 1.0}}}),
				}}}}
			},
			want: Claim{Resolved: true, Found: true, Generation: 4},
		},
		"UndecodableSpec": {
			reason: "A spec the API type cannot decode is not the composite's.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{Requirement: {Items: []*fnv1.Resource{
					claimItem(t, "demo", 4, map[string]any{"replicas": "two"}),
				}}}}
			},
			want: Claim{Resolved: true, Found: true, Generation: 4},
		},
		"OtherName": {
			reason: "Only the claim of this composite counts.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{Requirement: {Items: []*fnv1.Resource{
					claimItem(t, "other", 4, map[string]any{"replicas": 2.0}),
				}}}}
			},
			want: Claim{Resolved: true},
		},
		"NoSpec": {
			reason: "A claim without a spec decodes to the zero spec, which is not the composite's.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{Requirement: {Items: []*fnv1.Resource{
					claimItem(t, "demo", 4, nil),
				}}}}
			},
			want: Claim{Resolved: true, Found: true, Generation: 4},
		},
		"OddMetadata": {
			reason: "As unstructured's getters read them: a name that is not a string is no name, a generation that is not a number is 0; an item without content is skipped.",
			req: func(t *testing.T) *fnv1.RunFunctionRequest {
				odd := func(md map[string]any) *fnv1.Resource {
					s, err := structpb.NewStruct(map[string]any{"metadata": md, "spec": map[string]any{"replicas": 2.0, "config": map[string]any{"a": map[string]any{"b": 1.0}}}})
					if err != nil {
						t.Fatal(err)
					}
					return &fnv1.Resource{Resource: s}
				}
				return &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{Requirement: {Items: []*fnv1.Resource{
					{},
					odd(map[string]any{"name": []any{"demo"}, "generation": 7.0}),
					odd(map[string]any{"name": "demo", "generation": "7"}),
				}}}}
			},
			want: Claim{Resolved: true, Found: true, SpecMatches: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Read(tc.req(t), "demo", xr)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRead: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestObserved(t *testing.T) {
	at := func(gen int64, matches bool) Claim {
		return Claim{Resolved: true, Found: true, Generation: gen, SpecMatches: matches}
	}
	cases := map[string]struct {
		prev     int64
		claim    Claim
		inEffect bool
		want     int64
	}{
		"InEffect":              {prev: 2, claim: at(3, true), inEffect: true, want: 3},
		"InEffectNotSynced":     {prev: 2, claim: at(3, false), inEffect: true, want: 2},
		"RollingOut":            {prev: 2, claim: at(3, true), want: 2},
		"RollingOutWhatIsThere": {prev: 3, claim: at(3, true), want: 2},
		"NeverAboveTheClaim":    {prev: 9, claim: at(3, false), want: 2},
		"FirstGeneration":       {prev: 0, claim: at(1, true), want: 0},
		"NotFetched":            {prev: 5, claim: Claim{}, inEffect: true, want: 5},
		"Gone":                  {prev: 5, claim: Claim{Resolved: true}, inEffect: true, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Observed(tc.prev, tc.claim, tc.inEffect); got != tc.want {
				t.Errorf("Observed(%d, %+v, %t): want %d, got %d", tc.prev, tc.claim, tc.inEffect, tc.want, got)
			}
		})
	}
}

func TestSelector(t *testing.T) {
	ns := "firebolt"
	want := &fnv1.ResourceSelector{ApiVersion: "compute.firebolt.io/v1alpha1", Kind: "FireboltInstance", Match: &fnv1.ResourceSelector_MatchName{MatchName: "inst"}, Namespace: &ns}
	if diff := cmp.Diff(want, Selector("compute.firebolt.io/v1alpha1", "FireboltInstance", "inst", ns), protocmp.Transform()); diff != "" {
		t.Errorf("Selector: -want, +got:\n%s", diff)
	}
}
