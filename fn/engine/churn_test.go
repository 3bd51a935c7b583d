package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

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
	c := engine.New(logging.NewNopLogger(), &fixedProber{}, fixedEvents{}, engine.WithClock(func() time.Time { return now }))
	f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{fn.KindEngine: c})
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
	var conds []any
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
