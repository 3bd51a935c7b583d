package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// TestRunFunctionStableDoesNotChurn: a resting engine's call, repeated an
// hour later with what the first call wrote fed back as observed (the
// status Crossplane applied, the conditions it stored), returns a
// byte-identical response whose desired status is the observed one. Every
// write Crossplane makes of a composite is a watch event that reconciles
// it again and counts against its circuit breaker; a status that moves on
// every call (a timestamp, a counter, a message with a duration) would
// write on every call.
func TestRunFunctionStableDoesNotChurn(t *testing.T) {
	for _, name := range []string{"stable", "stopped"} {
		t.Run(name, func(t *testing.T) {
			req := loadRequest(t, name)
			first := runAt(t, req, responseClock)

			again := proto.Clone(req).(*fnv1.RunFunctionRequest)
			feedBack(t, again, first)
			second := runAt(t, again, responseClock.Add(time.Hour))

			if diff := cmp.Diff(first, second, protocmp.Transform()); diff != "" {
				t.Errorf("the second call answers differently, so Crossplane writes again: -first, +second:\n%s", diff)
			}
			observed := again.GetObserved().GetComposite().GetResource().GetFields()["status"].GetStructValue()
			desired := proto.Clone(second.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue()).(*structpb.Struct)
			desired.Fields["conditions"] = observed.GetFields()["conditions"]
			if diff := cmp.Diff(observed, desired, protocmp.Transform()); diff != "" {
				t.Errorf("the desired status differs from the observed one, so Crossplane writes it: -observed, +desired:\n%s", diff)
			}
		})
	}
}

func runAt(t *testing.T, req *fnv1.RunFunctionRequest, now time.Time) *fnv1.RunFunctionResponse {
	t.Helper()
	c := engine.New(&fixedProber{}, fixedEvents{}, engine.WithClock(func() time.Time { return now }))
	f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	return rsp
}

// feedBack makes req what Crossplane sends after applying rsp: the
// observed composite carries the desired status and the conditions the
// response set, stamped with a transition time as Crossplane stores them.
func feedBack(t *testing.T, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	status := proto.Clone(rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue()).(*structpb.Struct)
	conds := make([]any, 0, len(rsp.GetConditions()))
	for _, c := range rsp.GetConditions() {
		conds = append(conds, map[string]any{
			"type":               c.GetType(),
			"status":             map[fnv1.Status]string{fnv1.Status_STATUS_CONDITION_TRUE: "True", fnv1.Status_STATUS_CONDITION_FALSE: "False"}[c.GetStatus()],
			"reason":             c.GetReason(),
			"message":            c.GetMessage(),
			"lastTransitionTime": responseClock.UTC().Format(time.RFC3339),
		})
	}
	lv, err := structpb.NewList(conds)
	if err != nil {
		t.Fatal(err)
	}
	status.Fields["conditions"] = structpb.NewListValue(lv)
	req.GetObserved().GetComposite().GetResource().GetFields()["status"] = structpb.NewStructValue(status)
}

// TestRunFunctionPollsWhileWatchesAreDropped: while Crossplane's circuit
// breaker for the composite is open (Responsive False, WatchCircuitOpen)
// an edit's watch event is dropped and only a timed call notices it, so
// the resting engine asks to be called again within seconds instead of
// after its long stable TTL; with the breaker closed the TTL is the long
// one. Nothing else in the response changes but lastReconciled, once the
// status has rested for breakerReprobe.
func TestRunFunctionPollsWhileWatchesAreDropped(t *testing.T) {
	closed := loadRequest(t, "stable")
	open := proto.Clone(closed).(*fnv1.RunFunctionRequest)
	status := open.GetObserved().GetComposite().GetResource().GetFields()["status"].GetStructValue()
	conds := status.GetFields()["conditions"].GetListValue()
	if conds == nil {
		conds = &structpb.ListValue{}
	}
	responsive, err := structpb.NewStruct(map[string]any{
		"type": "Responsive", "status": "False", "reason": "WatchCircuitOpen",
		"message": "Too many watch events from XFireboltEngine/demo-x7k2p. Allowing events periodically.",
	})
	if err != nil {
		t.Fatal(err)
	}
	conds.Values = append(conds.Values, structpb.NewStructValue(responsive))
	status.Fields["conditions"] = structpb.NewListValue(conds)

	want := runAt(t, closed, responseClock)
	if got := want.GetMeta().GetTtl().AsDuration(); got != 30*time.Minute {
		t.Fatalf("breaker closed: ttl %s, want the stable TTL 30m", got)
	}
	want.Meta.Ttl = durationpb.New(5 * time.Second)
	// The fixture's status last changed about an hour before: long enough
	// for the breaker's open duration to have passed, so the engine also
	// stamps lastReconciled, a write whose watch event lets Crossplane close
	// the breaker (TestBreakerReprobe).
	want.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()["lastReconciled"] =
		structpb.NewStringValue(responseClock.UTC().Format(time.RFC3339))
	got := runAt(t, open, responseClock)
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("breaker open: -want (the closed response with a 5s ttl and lastReconciled stamped), +got:\n%s", diff)
	}
}
