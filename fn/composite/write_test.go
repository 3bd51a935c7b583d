package composite

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

type testStatus struct {
	Phase string `json:"phase,omitempty"`
	Count int    `json:"count"`
}

// TestWriteStatus: the composer's status replaces the fields it owns (even
// one it now leaves out) and keeps what an earlier pipeline step wrote.
func TestWriteStatus(t *testing.T) {
	req := &fnv1.RunFunctionRequest{Desired: &fnv1.State{Composite: &fnv1.Resource{
		Resource: resource.MustStructJSON(`{"status": {"phase": "old", "count": 3, "other": "kept"}}`),
	}}}
	rsp := &fnv1.RunFunctionResponse{}
	if err := Write(req, rsp, Response[testStatus]{Status: testStatus{Count: 1}}); err != nil {
		t.Fatal(err)
	}
	got := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
	want := map[string]any{"count": float64(1), "other": "kept"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("desired status: -want, +got:\n%s", diff)
	}
}

// TestWriteEncodedDesired: a desired resource given in protobuf form is
// written exactly as the same object converted by the SDK.
func TestWriteEncodedDesired(t *testing.T) {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"a": "b"}, "list": []any{1.0, "x", nil, true}}
	st, err := structpb.NewStruct(obj)
	if err != nil {
		t.Fatal(err)
	}
	write := func(d Desired) *fnv1.RunFunctionResponse {
		rsp := &fnv1.RunFunctionResponse{}
		if err := Write(&fnv1.RunFunctionRequest{}, rsp, Response[testStatus]{Resources: map[resource.Name]Desired{"a": d, "b": {Object: obj}}}); err != nil {
			t.Fatal(err)
		}
		return rsp
	}
	for _, ready := range []bool{false, true} {
		want := write(Desired{Object: obj, Ready: ready})
		got := write(Desired{Object: obj, Ready: ready, Struct: st})
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("ready %v: -converted, +encoded:\n%s", ready, diff)
		}
	}
}

// TestCloneStruct: a clone equals its original and shares nothing with it.
func TestCloneStruct(t *testing.T) {
	orig, err := structpb.NewStruct(map[string]any{
		"s": "x", "n": 1.5, "b": true, "null": nil,
		"m": map[string]any{"l": []any{"a", map[string]any{"k": 2.0}, []any{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := proto.Clone(orig)
	tpl := NewStructTemplate(orig)
	clones := map[string]func() *structpb.Struct{
		"CloneStruct":   func() *structpb.Struct { return CloneStruct(orig) },
		"Template":      tpl.Clone,
		"TemplateAgain": tpl.Clone,
	}
	for name, clone := range clones {
		c := clone()
		if diff := cmp.Diff(want, c, protocmp.Transform()); diff != "" {
			t.Fatalf("%s: clone: -want, +got:\n%s", name, diff)
		}
		c.Fields["s"] = structpb.NewStringValue("changed")
		c.Fields["m"].GetStructValue().Fields["l"].GetListValue().Values[1].GetStructValue().Fields["k"] = structpb.NewNumberValue(3)
		c.Fields["m"].GetStructValue().Fields["l"].GetListValue().Values[0] = structpb.NewNullValue()
		if diff := cmp.Diff(want, orig, protocmp.Transform()); diff != "" {
			t.Errorf("%s: changing the clone changed the original: -want, +got:\n%s", name, diff)
		}
	}
	if CloneStruct(nil) != nil || NewStructTemplate(nil).Clone() != nil {
		t.Error("a clone of nil is not nil")
	}
}

// TestWriteEncodeStatus: a composer's own status encoder replaces the JSON
// round trip and nothing else: owned fields it leaves out are still
// deleted, other steps' fields kept.
func TestWriteEncodeStatus(t *testing.T) {
	req := func() *fnv1.RunFunctionRequest {
		return &fnv1.RunFunctionRequest{Desired: &fnv1.State{Composite: &fnv1.Resource{
			Resource: resource.MustStructJSON(`{"status": {"phase": "old", "count": 3, "other": "kept"}}`),
		}}}
	}
	st := testStatus{Count: 1}
	want := &fnv1.RunFunctionResponse{}
	if err := Write(req(), want, Response[testStatus]{Status: st}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	got := &fnv1.RunFunctionResponse{}
	enc := func(s testStatus) (map[string]any, error) {
		calls++
		return map[string]any{"count": float64(s.Count)}, nil
	}
	if err := Write(req(), got, Response[testStatus]{Status: st, EncodeStatus: enc}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("EncodeStatus called %d times, want 1", calls)
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("-JSON round trip, +EncodeStatus:\n%s", diff)
	}
	failing := func(testStatus) (map[string]any, error) { return nil, errors.New("boom") }
	if err := Write(req(), &fnv1.RunFunctionResponse{}, Response[testStatus]{Status: st, EncodeStatus: failing}); err == nil || !strings.Contains(err.Error(), "cannot encode composite status: boom") {
		t.Errorf("a failing encoder: want cannot encode composite status: boom, got %v", err)
	}
}
