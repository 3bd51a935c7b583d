package fn

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// panicker panics for the composite named bad, after writing a partial
// response, and composes every other one.
type panicker struct{ bad string }

func (p panicker) Compose(_ context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	if call.XR.Resource.GetName() == p.bad {
		response.ConditionTrue(rsp, "HalfWritten", "Partial")
		if err := response.SetDesiredComposedResources(rsp, map[resource.Name]*resource.DesiredComposed{"half": {Resource: composed.New()}}); err != nil {
			return err
		}
		var m map[string]int
		m["boom"]++ //nolint:staticcheck // A nil map write on purpose: the kind of bug a panic comes from.
	}
	response.ConditionTrue(rsp, "ComposedBy", "panicker")
	return nil
}

func named(kind, name string) *fnv1.RunFunctionRequest {
	return &fnv1.RunFunctionRequest{
		Meta: &fnv1.RequestMeta{Tag: "t"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
			`{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"` + kind + `","metadata":{"name":"` + name + `"}}`)}},
	}
}

// TestRunFunctionRecoversPanic shows that a panic while composing one
// composite becomes a Fatal result for it alone, logged with its kind and
// name, and that the next calls, for another composite of the same kind
// and of another kind, compose normally.
func TestRunFunctionRecoversPanic(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	log := logging.NewLogrLogger(funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, args)
	}, funcr.Options{}))
	f := NewWithComposers(log, map[string]Composer{
		v1alpha1.XFireboltEngineKind:   panicker{bad: "bad"},
		v1alpha1.XFireboltInstanceKind: &recorder{name: v1alpha1.XFireboltInstanceKind},
	})
	composed := func(reason string) *fnv1.RunFunctionResponse {
		return &fnv1.RunFunctionResponse{
			Meta:       &fnv1.ResponseMeta{Tag: "t", Ttl: durationpb.New(response.DefaultTTL)},
			Conditions: []*fnv1.Condition{{Type: "ComposedBy", Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: reason, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}},
		}
	}
	calls := []struct {
		reason string
		req    *fnv1.RunFunctionRequest
		want   *fnv1.RunFunctionResponse
	}{
		{
			reason: "The panic is a Fatal result naming the composite; the half-written response is dropped.",
			req:    named(v1alpha1.XFireboltEngineKind, "bad"),
			want:   fatal(`cannot compose XFireboltEngine "bad": the function panicked: assignment to entry in nil map`),
		},
		{
			reason: "The next composite of the same kind composes.",
			req:    named(v1alpha1.XFireboltEngineKind, "good"),
			want:   composed("panicker"),
		},
		{
			reason: "A composite of another kind composes.",
			req:    named(v1alpha1.XFireboltInstanceKind, "inst"),
			want:   composed(v1alpha1.XFireboltInstanceKind),
		},
	}
	for _, c := range calls {
		rsp, err := f.RunFunction(context.Background(), c.req)
		if err != nil {
			t.Fatalf("%s\nRunFunction returned a transport error: %v", c.reason, err)
		}
		if diff := cmp.Diff(c.want, rsp, protocmp.Transform()); diff != "" {
			t.Errorf("%s\nRunFunction(...): -want rsp, +got rsp:\n%s", c.reason, diff)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	var panics []string
	for _, l := range logged {
		if strings.Contains(l, "Recovered from a panic") {
			panics = append(panics, l)
		}
	}
	if len(panics) != 1 {
		t.Fatalf("want one panic logged, got %d: %q", len(panics), logged)
	}
	for _, want := range []string{`"kind"="XFireboltEngine"`, `"name"="bad"`, `"panic"="assignment to entry in nil map"`, `panic_test.go`} {
		if !strings.Contains(panics[0], want) {
			t.Errorf("the panic's log line lacks %s: %s", want, panics[0])
		}
	}
}

// TestRunFunctionPanicKeepsTheRequestsDesiredState: what a composer wrote
// before it panicked reaches neither the Fatal response nor the request;
// the response carries the desired state the request came with.
func TestRunFunctionPanicKeepsTheRequestsDesiredState(t *testing.T) {
	f := NewWithComposers(logging.NewNopLogger(), map[string]Composer{v1alpha1.XFireboltEngineKind: panicker{bad: "bad"}})
	desired := func() *fnv1.State {
		return &fnv1.State{
			Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"XFireboltEngine","metadata":{"name":"bad"}}`)},
			Resources: map[string]*fnv1.Resource{"earlier-step": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap"}`)}},
		}
	}
	req := named(v1alpha1.XFireboltEngineKind, "bad")
	req.Desired = desired()
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := fatal(`cannot compose XFireboltEngine "bad": the function panicked: assignment to entry in nil map`)
	want.Desired = desired()
	if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
		t.Errorf("response: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(desired(), req.GetDesired(), protocmp.Transform()); diff != "" {
		t.Errorf("the request's desired state changed: -want, +got:\n%s", diff)
	}
}
