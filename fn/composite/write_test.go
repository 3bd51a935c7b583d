package composite

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// TestSharedStructVerification: with verification on, a shared object
// written to after it was made is caught at its next use; untouched, it is
// served as it is, the same pointer every time.
func TestSharedStructVerification(t *testing.T) {
	VerifySharedStructs(true)
	t.Cleanup(func() { VerifySharedStructs(false) })
	obj := func() *structpb.Struct {
		s, err := structpb.NewStruct(map[string]any{
			"s": "x", "n": 1.5, "b": true, "null": nil,
			"m": map[string]any{"l": []any{"a", map[string]any{"k": 2.0}, []any{}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	edits := map[string]func(*structpb.Struct){
		"a top-level field": func(s *structpb.Struct) { s.Fields["s"] = structpb.NewStringValue("changed") },
		"a field added":     func(s *structpb.Struct) { s.Fields["new"] = structpb.NewNullValue() },
		"a nested number": func(s *structpb.Struct) {
			s.Fields["m"].GetStructValue().Fields["l"].GetListValue().Values[1].GetStructValue().Fields["k"] = structpb.NewNumberValue(3)
		},
		"a list element": func(s *structpb.Struct) {
			s.Fields["m"].GetStructValue().Fields["l"].GetListValue().Values[0] = structpb.NewNullValue()
		},
		"a field deleted":     func(s *structpb.Struct) { delete(s.GetFields(), "b") },
		"a kind set in place": func(s *structpb.Struct) { s.Fields["b"].Kind = &structpb.Value_BoolValue{BoolValue: false} },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			sh := NewSharedStruct(obj())
			first := sh.Struct()
			if again := sh.Struct(); again != first {
				t.Fatal("a shared object is served as a new pointer")
			}
			if diff := cmp.Diff(obj(), first, protocmp.Transform()); diff != "" {
				t.Fatalf("served: -want, +got:\n%s", diff)
			}
			edit(first)
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), "written to after it was made") {
					t.Errorf("an edit of %s: recovered %v, want the shared-object panic", name, r)
				}
			}()
			sh.Struct()
		})
	}
	t.Run("made with verification off", func(t *testing.T) {
		VerifySharedStructs(false)
		sh := NewSharedStruct(obj())
		VerifySharedStructs(true)
		first := sh.Struct()
		edits["a field added"](first)
		defer func() {
			if r := recover(); r == nil {
				t.Error("an edit of an object made with verification off went unnoticed once it was on")
			}
		}()
		sh.Struct()
	})
	if NewSharedStruct(nil).Struct() != nil {
		t.Error("a shared nil is not nil")
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

// TestWriteStatusPrecondition: the desired composite carries the observed
// resourceVersion, making Crossplane's apply of the status conditional,
// exactly when the observed readiness is behind the reconcile's (Ready
// other than the call's readiness, Ready or Synced at an older generation)
// and the composed resources stay the same; a custom condition that moves
// sets none.
func TestWriteStatusPrecondition(t *testing.T) {
	const current = `{"metadata": {"name": "x", "resourceVersion": "4711", "generation": 7}, "status": {"conditions": [
		{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "observedGeneration": 7},
		{"type": "Ready", "status": "True", "reason": "Available", "observedGeneration": 7},
		{"type": "EngineReady", "status": "True", "reason": "EngineReady", "message": "serving"}]}}`
	ready := Condition{Type: "EngineReady", Status: metav1.ConditionTrue, Reason: "EngineReady", Message: "serving"}
	moved := Condition{Type: "EngineReady", Status: metav1.ConditionTrue, Reason: "EngineReady", Message: "serving on 3"}
	rolling := Condition{Type: "EngineReady", Status: metav1.ConditionFalse, Reason: "Rolling", Message: "rolling out generation 2"}
	one := map[resource.Name]Desired{"a": {Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}}
	two := map[resource.Name]Desired{"a": one["a"], "b": one["a"]}
	observedOne := map[string]*fnv1.Resource{"a": {Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "ConfigMap"}`)}}
	cases := map[string]struct {
		xr        string
		ready     bool
		cond      Condition
		resources map[resource.Name]Desired
		want      string
	}{
		"Current":               {xr: current, ready: true, cond: ready, resources: one},
		"CustomConditionMoves":  {xr: current, ready: true, cond: moved, resources: one},
		"ReadinessDiffers":      {xr: current, ready: false, cond: rolling, resources: one, want: "4711"},
		"ReadyAtOlderGen":       {xr: strings.Replace(current, `"generation": 7`, `"generation": 8`, 1), ready: true, cond: ready, resources: one, want: "4711"},
		"SyncedAtOlderGen":      {xr: strings.Replace(current, `"observedGeneration": 7},`, `"observedGeneration": 6},`, 1), ready: true, cond: ready, resources: one, want: "4711"},
		"NoReadyYetNotReady":    {xr: `{"metadata": {"resourceVersion": "12", "generation": 1}}`, ready: false, cond: rolling, resources: one},
		"NoReadyYetReady":       {xr: `{"metadata": {"resourceVersion": "12", "generation": 1}}`, ready: true, cond: ready, resources: one, want: "12"},
		"ComposedChange":        {xr: current, ready: false, cond: rolling, resources: two},
		"ComposedNoneLeft":      {xr: current, ready: false, cond: rolling},
		"NoResourceVersion":     {xr: strings.Replace(current, `"resourceVersion": "4711", `, "", 1), ready: false, cond: rolling, resources: one},
		"CurrentComposedChange": {xr: current, ready: true, cond: ready, resources: two},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{
				Composite: &fnv1.Resource{Resource: resource.MustStructJSON(tc.xr)},
				Resources: observedOne,
			}}
			rsp := &fnv1.RunFunctionResponse{}
			if err := Write(req, rsp, Response[testStatus]{Ready: tc.ready, Conditions: []Condition{tc.cond}, Resources: tc.resources}); err != nil {
				t.Fatal(err)
			}
			md, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["metadata"].(map[string]any)
			got, _ := md["resourceVersion"].(string)
			if got != tc.want {
				t.Errorf("desired composite's resourceVersion %q, want %q", got, tc.want)
			}
		})
	}
}
