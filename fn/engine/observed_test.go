package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
)

// observedForms is u as both kinds of ObservedObject: unstructured content
// (what unit tests build) and the request's Struct (what Read builds).
func observedForms(t *testing.T, u *unstructured.Unstructured) map[string]*ObservedObject {
	t.Helper()
	if u == nil {
		return map[string]*ObservedObject{"nil": nil}
	}
	s, err := structpb.NewStruct(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*ObservedObject{"content": {m: u.Object}, "struct": {s: s}}
}

// TestObservedFieldsReadAsUnstructured: a field read from the request's
// Struct in place is what the same read gave of the object converted whole
// as the SDK converts it, for every type a field can have there.
func TestObservedFieldsReadAsUnstructured(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "demo-g1", "uid": "u-1", "generation": 3.0, "labels": map[string]any{"a": "b"}},
		"spec": map[string]any{
			"replicas": 2.0, "fraction": 2.7, "negative": -4.0, "huge": 1e300, "text": "12", "bad": "x", "flag": true,
			"none": nil, "list": []any{"3"}, "selector": map[string]any{LabelGeneration: "7"}, "reason": "r",
		},
		"status": "not an object",
	}
	paths := [][]string{
		{"metadata", "name"}, {"metadata", "uid"}, {"metadata", "generation"}, {"metadata", "labels"}, {"metadata", "labels", "a"},
		{"spec", "replicas"}, {"spec", "fraction"}, {"spec", "negative"}, {"spec", "huge"}, {"spec", "text"}, {"spec", "bad"},
		{"spec", "flag"}, {"spec", "none"}, {"spec", "none", "deeper"}, {"spec", "list"}, {"spec", "list", "0"},
		{"spec", "selector", LabelGeneration}, {"spec", "reason"}, {"spec", "absent"},
		{"status", "replicas"}, {"status"}, {"absent", "replicas"},
	}
	s, err := structpb.NewStruct(obj)
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Resources: map[string]*fnv1.Resource{"x": {Resource: s}, "empty": {}}}}
	sdk, err := request.GetObservedComposedResources(req)
	if err != nil {
		t.Fatal(err)
	}
	got := observedComposed(req.GetObserved().GetResources())
	for name, o := range sdk {
		want := o.Resource.UnstructuredContent()
		in := got[name]
		if diff := cmp.Diff(want, in.UnstructuredContent()); diff != "" {
			t.Errorf("%s: whole object: -sdk, +got:\n%s", name, diff)
		}
		if w, g := o.Resource.GetName(), in.GetName(); w != g {
			t.Errorf("%s: name: sdk %q, got %q", name, w, g)
		}
		if w, g := o.Resource.GetUID(), in.GetUID(); w != g {
			t.Errorf("%s: uid: sdk %q, got %q", name, w, g)
		}
		for _, p := range paths {
			if w, g := number(want, p...), in.number(p...); w != g {
				t.Errorf("%s: number %v: sdk %d, got %d", name, p, w, g)
			}
			ws, wok, _ := unstructured.NestedString(want, p...)
			gs, gok := in.str(p...)
			if ws != gs || wok != gok {
				t.Errorf("%s: string %v: sdk %q %v, got %q %v", name, p, ws, wok, gs, gok)
			}
		}
	}
}

// TestObservedWholeObjectIsACopy: an object returned unchanged is the
// caller's to edit; the request and the next read are untouched.
func TestObservedWholeObjectIsACopy(t *testing.T) {
	s, err := structpb.NewStruct(map[string]any{"spec": map[string]any{"replicas": 2.0}})
	if err != nil {
		t.Fatal(err)
	}
	for form, o := range map[string]*ObservedObject{"content": {m: s.AsMap()}, "struct": {s: s}} {
		o.UnstructuredContent()["spec"].(map[string]any)["replicas"] = 5.0
		if got := o.number("spec", "replicas"); got != 2 {
			t.Errorf("%s: an edit of the returned object changed the observed one: replicas %d", form, got)
		}
	}
}
