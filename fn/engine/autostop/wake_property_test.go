package autostop

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// A fresh wake stamp on a running engine changes nothing a decision says
// (count, reason, idle clock, lastScaledAt), whatever the spec, the previous
// decision, the sample and the time; on an engine at zero, or one the same
// decision without the stamp would stop, it wakes to activeReplicas with
// the clock started at the wake.
func TestWakeStampOnlyWakesStopped(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		active := int32(rapid.IntRange(1, 6).Draw(t, "activeReplicas"))
		spec := &v1alpha1.AutoStopSpec{
			Enabled:        true,
			ActiveReplicas: active,
			IdleReplicas:   i32(int32(rapid.IntRange(0, int(active)).Draw(t, "idleReplicas"))),
			IdleTimeout:    dur(time.Duration(rapid.IntRange(1, 120).Draw(t, "idleTimeout minutes")) * time.Minute),
		}
		if rapid.Bool().Draw(t, "schedule") {
			h := rapid.IntRange(0, 23).Draw(t, "window start")
			spec.Schedule = []v1alpha1.AutoStopWindow{win(fmt.Sprintf("%02d:00", h), fmt.Sprintf("%02d:00", (h+rapid.IntRange(1, 12).Draw(t, "window hours"))%24))}
		}
		at := now.Add(time.Duration(rapid.IntRange(0, 7*24*60).Draw(t, "minutes into the week")) * time.Minute)
		prev := Status{
			Replicas: i32(int32(rapid.IntRange(0, 8).Draw(t, "previous replicas"))),
			Reason:   rapid.SampledFrom(Reasons).Draw(t, "previous reason"),
		}
		if rapid.Bool().Draw(t, "has idle clock") {
			ago := at.Add(-time.Duration(rapid.IntRange(0, 180).Draw(t, "idle minutes")) * time.Minute)
			prev.LastActivityTime = &ago
		}
		var sample Sample
		switch rapid.IntRange(0, 2).Draw(t, "sample") {
		case 1:
			sample = Observed(int64(rapid.IntRange(0, 3).Draw(t, "queries")))
		case 2:
			sample = Failed("connection refused")
		}
		in := Input{
			Spec:         spec,
			SpecReplicas: int32(rapid.IntRange(0, 8).Draw(t, "spec.replicas")),
			Previous:     prev,
			Activity:     sample,
			Phase:        rapid.SampledFrom([]v1alpha1.EnginePhase{v1alpha1.EnginePhaseStable, v1alpha1.EnginePhaseStopped}).Draw(t, "phase"),
			Now:          at,
		}
		without, err := Decide(in)
		if err != nil {
			t.Fatalf("Decide without a stamp: %v", err)
		}
		age := time.Duration(rapid.IntRange(-299, 299).Draw(t, "stamp age seconds")) * time.Second
		in.WakeStamp = at.Add(-age).UTC().Format(time.RFC3339)
		with, err := Decide(in)
		if err != nil {
			t.Fatalf("Decide with a stamp: %v", err)
		}

		current := Current(in.SpecReplicas, prev)
		if current > 0 && *without.Status.Replicas > 0 {
			if diff := cmp.Diff(without.Status, with.Status); diff != "" || with.Scaled != without.Scaled {
				t.Fatalf("a fresh stamp changed the decision on an engine running %d replica(s): -without +with:\n%s", current, diff)
			}
			return
		}
		wantClock := at.UTC().Truncate(time.Second)
		if *with.Status.Replicas != active || with.Status.Reason != ReasonWakeRequested || !with.Status.LastActivityTime.Equal(wantClock) {
			t.Fatalf("a fresh stamp on an engine at %d replica(s), which this decision leaves at %d: %+v, want %d replica(s), WakeRequested, the clock at %s",
				current, *without.Status.Replicas, with.Status, active, wantClock)
		}
	})
}
