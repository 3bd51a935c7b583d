package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// autoStopSpec is a two-replica engine with auto-stop: idle after a minute,
// sampled every 10 s (one simulator step).
func autoStopSpec(mods ...func(map[string]any)) map[string]any {
	spec := fixtureSpec("ghcr.io/firebolt-db/engine:4.29", 2)
	as := map[string]any{"enabled": true, "activeReplicas": float64(2), "idleTimeout": "1m", "pollInterval": "10s"}
	for _, m := range mods {
		m(as)
	}
	spec["autoStop"] = as
	return spec
}

func idlePods() scrape.Observation {
	return scrape.Observation{Pods: []scrape.PodResult{{Pod: "demo-g0-0"}, {Pod: "demo-g0-1"}}}
}

// settle steps until the engine has converged on its effective count.
func settle(t *testing.T, s *sim, why string) {
	t.Helper()
	for range 20 {
		s.Step()
		if ok, _ := s.Converged(); ok {
			return
		}
	}
	_, why2 := s.Converged()
	t.Fatalf("%s: not converged after 20 steps: %s\n%s", why, why2, s.historyText())
}

func (s *sim) historyText() string {
	out := ""
	for _, h := range s.history {
		out += h + "\n"
	}
	return out
}

func (s *sim) autoStop(t *testing.T) v1alpha1.AutoStopStatus {
	t.Helper()
	a := s.Status().AutoStop
	if a == nil || a.Replicas == nil {
		t.Fatalf("step %d: no status.autoStop with replicas: %+v", s.step, a)
	}
	return *a
}

func (s *sim) ttl() time.Duration { return s.lastRsp.GetMeta().GetTtl().AsDuration() }

// Auto-stop through RunFunction against the simulated control plane: the
// decision goes to status.autoStop, the engine rolls to that count through
// the blue-green path, and the claim's spec.replicas is never touched.
func TestAutoStopIdlesToZeroAndWakes(t *testing.T) {
	delay := 0
	s := newSim(t, scripted{podDelay: &delay}, autoStopSpec())
	reg := prometheus.NewPedanticRegistry()
	m, err := metrics.New(reg, fn.Kinds(), metrics.WithClock(s.now))
	if err != nil {
		t.Fatal(err)
	}
	// decided counts the decisions by the reason each call returned, to
	// compare with function_firebolt_autostop_decisions_total.
	decided := map[string]float64{}
	s.f = fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
		v1alpha1.XFireboltEngineKind: decisions{engine.New(simProber{s}, simEvents{s}, engine.WithClock(s.now), engine.WithMetrics(m)), decided},
	}, fn.WithMetrics(m))
	defer func() {
		got := map[string]float64{}
		for _, mt := range family(t, reg, "function_firebolt_autostop_decisions_total").GetMetric() {
			if v := mt.GetCounter().GetValue(); v > 0 {
				got[mt.GetLabel()[0].GetValue()] = v
			}
		}
		if diff := cmp.Diff(decided, got); diff != "" {
			t.Errorf("function_firebolt_autostop_decisions_total by reason: -decided, +metric:\n%s", diff)
		}
	}()
	s.activity = idlePods()
	settle(t, s, "create")
	start := s.now()

	// Quiet pods: idle once idleTimeout has passed since the clock was
	// anchored, then stopped at zero.
	for s.autoStop(t).Reason != "Idle" {
		if s.now().Sub(start) > 2*time.Minute {
			t.Fatalf("not idle 2m after creation: %+v\n%s", s.autoStop(t), s.historyText())
		}
		if ttl := s.ttl(); ttl > 10*time.Second {
			t.Fatalf("step %d: TTL %s while auto-stop polls every 10s", s.step, ttl)
		}
		s.Step()
	}
	if s.now().Sub(start) < time.Minute {
		t.Errorf("idled %s after creation, before idleTimeout 1m", s.now().Sub(start))
	}
	settle(t, s, "idle to zero")
	st := s.Status()
	if st.Phase != v1alpha1.EnginePhaseStopped || *s.autoStop(t).Replicas != 0 || s.autoStop(t).LastScaledAt == nil {
		t.Fatalf("after idling: phase %s, autoStop %+v", st.Phase, s.autoStop(t))
	}
	if c := s.conditions[engine.TypeEngineReady]; c.GetReason() != engine.ReasonAutoStopped {
		t.Errorf("EngineReady while auto-stopped: %s %q, want reason %s", c.GetReason(), c.GetMessage(), engine.ReasonAutoStopped)
	}
	if got := s.Spec().Replicas; got != 2 {
		t.Fatalf("the product changed spec.replicas to %d", got)
	}
	samples := s.samples
	for range 3 {
		s.Step()
	}
	if s.samples != samples {
		t.Errorf("sampled %d times at zero replicas; there is nothing to sample", s.samples-samples)
	}

	// A stale stamp is ignored and says so; a fresh one wakes the engine.
	s.SetWakeStamp(s.now().Add(-10 * time.Minute).Format(time.RFC3339))
	s.Step()
	if a := s.autoStop(t); *a.Replicas != 0 || a.Reason != "Stopped" {
		t.Fatalf("a 10m old wake stamp changed the decision: %+v", a)
	}
	if c := s.conditions[engine.TypeAutoStop]; c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE || c.GetReason() != "Stopped" || !strings.Contains(c.GetMessage(), "older than 5m0s") {
		t.Errorf("AutoStop condition with a stale stamp: %s %s %q, want True, Stopped, saying the stamp is too old", c.GetStatus(), c.GetReason(), c.GetMessage())
	}
	s.SetWakeStamp(s.now().Format(time.RFC3339))
	s.Step()
	if a := s.autoStop(t); *a.Replicas != 2 || a.Reason != "WakeRequested" {
		t.Fatalf("a fresh wake stamp: %+v, want 2 replicas, WakeRequested", a)
	}
	settle(t, s, "wake")
	if s.Status().Phase != v1alpha1.EnginePhaseStable {
		t.Fatalf("woken engine in phase %s", s.Status().Phase)
	}
	if got := s.Spec().Replicas; got != 2 {
		t.Fatalf("the product changed spec.replicas to %d", got)
	}

	// Disabled again: spec.replicas rules, the history is kept, and the
	// condition says auto-stop is off.
	s.SetSpec(autoStopSpec(func(as map[string]any) { as["enabled"] = false }))
	s.SetWakeStamp("")
	settle(t, s, "disable")
	a := s.autoStop(t)
	if *a.Replicas != 2 || a.Reason != "Disabled" || a.LastActivityTime != nil || a.LastScaledAt == nil {
		t.Errorf("auto-stop disabled: %+v, want 2 replicas, Disabled, no idle clock, lastScaledAt kept", a)
	}
	if c := s.conditions[engine.TypeAutoStop]; c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != "Disabled" {
		t.Errorf("AutoStop condition once disabled: %s %s %q, want False, Disabled", c.GetStatus(), c.GetReason(), c.GetMessage())
	}
}

func TestAutoStopStaysUp(t *testing.T) {
	cases := map[string]struct {
		reason   string
		spec     map[string]any
		activity scrape.Observation
		want     string
	}{
		"QueriesRunning": {
			reason:   "A pod that reports a query keeps the engine up, and refreshes the idle clock.",
			spec:     autoStopSpec(),
			activity: scrape.Observation{Pods: []scrape.PodResult{{Pod: "demo-g0-0"}, {Pod: "demo-g0-1", Suspended: 1}}},
			want:     "ActivityObserved",
		},
		"ScrapesFail": {
			reason:   "A failing scrape never counts as idle.",
			spec:     autoStopSpec(),
			activity: scrape.Observation{Pods: []scrape.PodResult{{Pod: "demo-g0-0"}, {Pod: "demo-g0-1", Err: errors.New("connection refused")}}},
			want:     "ScrapeFailed",
		},
		"ScheduleActive": {
			reason: "A window around the whole run holds the engine at activeReplicas, however idle.",
			spec: autoStopSpec(func(as map[string]any) {
				as["schedule"] = []any{map[string]any{"start": "11:00", "end": "13:00", "days": []any{"Sun"}}}
			}),
			activity: idlePods(),
			want:     "ScheduleActive",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			delay := 0
			s := newSim(t, scripted{podDelay: &delay}, tc.spec)
			s.activity = tc.activity
			settle(t, s, "create")
			for range 30 { // 5 minutes, five times idleTimeout
				s.Step()
			}
			a := s.autoStop(t)
			if *a.Replicas != 2 || a.Reason != tc.want || a.LastScaledAt != nil {
				t.Fatalf("%s\nafter 5m: %+v, want 2 replicas, reason %s, never scaled", tc.reason, a, tc.want)
			}
			if ok, why := s.Converged(); !ok || s.Status().Phase != v1alpha1.EnginePhaseStable {
				t.Fatalf("not stable: %s", why)
			}
			if tc.want != "ScheduleActive" && (a.LastActivityTime == nil || s.now().Sub(a.LastActivityTime.Time) > 10*time.Second) {
				t.Errorf("idle clock not refreshed: lastActivityTime %v at %s", a.LastActivityTime, s.now())
			}
		})
	}
}

// An engine without autoStop, and one whose autoStop is disabled, never get
// status.autoStop: nothing to write, nothing to sample.
func TestAutoStopDisabledCostsNothing(t *testing.T) {
	for name, spec := range map[string]map[string]any{
		"Unset":    fixtureSpec("ghcr.io/firebolt-db/engine:4.29", 2),
		"Disabled": autoStopSpec(func(as map[string]any) { as["enabled"] = false }),
	} {
		t.Run(name, func(t *testing.T) {
			delay := 0
			s := newSim(t, scripted{podDelay: &delay}, spec)
			s.activity = idlePods()
			settle(t, s, "create")
			for range 12 {
				s.Step()
			}
			if a := s.Status().AutoStop; a != nil {
				t.Errorf("status.autoStop %+v on an engine that never enabled auto-stop", a)
			}
			if s.samples != 0 {
				t.Errorf("%d activity samples with auto-stop off", s.samples)
			}
		})
	}
}

// decisions counts the auto-stop reasons a composer returns.
type decisions struct {
	fn.Composer
	decided map[string]float64
}

func (d decisions) Compose(ctx context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	// Auto-stop decides only at rest, from the phase the call observed.
	var phase string
	if st, ok := call.XR.Resource.Object["status"].(map[string]any); ok {
		phase, _ = st["phase"].(string)
	}
	err := d.Composer.Compose(ctx, call, rsp)
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	as, _ := st["autoStop"].(map[string]any)
	if r, _ := as["reason"].(string); r != "" && r != "Disabled" && (phase == "stable" || phase == "stopped") {
		d.decided[r]++
	}
	return err
}

// A fresh wake stamp on a running engine, stamped again on every step as
// the gateway's agent does while the engine's Service has no ready
// endpoint, changes neither its count nor its reason, through RunFunction:
// the engine decides exactly as a twin without the stamp, and its AutoStop
// condition says the stamp is ignored. An engine whose quiet would stop it
// is kept at activeReplicas instead (wake-on-zero's own case).
func TestAutoStopWakeStampLeavesRunningEngine(t *testing.T) {
	busy := scrape.Observation{Pods: []scrape.PodResult{{Pod: "demo-g0-0", Running: 2}}}
	failing := scrape.Observation{Pods: []scrape.PodResult{{Pod: "demo-g0-0", Err: errors.New("connection refused")}}}
	for _, replicas := range []int{1, 2} {
		for name, tc := range map[string]struct {
			activity scrape.Observation
			want     string
		}{
			"Busy":    {busy, "ActivityObserved"},
			"Idle":    {idlePods(), "ActivityObserved"},
			"Failing": {failing, "ScrapeFailed"},
		} {
			t.Run(fmt.Sprintf("%dReplicas%s", replicas, name), func(t *testing.T) {
				spec := func() map[string]any {
					s := autoStopSpec(func(as map[string]any) { as["activeReplicas"] = float64(1) })
					s["replicas"] = float64(replicas)
					return s
				}
				delay := 0
				stamped, twin := newSim(t, scripted{podDelay: &delay}, spec()), newSim(t, scripted{podDelay: &delay}, spec())
				for _, s := range []*sim{stamped, twin} {
					s.activity = tc.activity
					settle(t, s, "create")
				}
				// Below idleTimeout (1m) from the clock's anchor.
				for range 4 {
					stamped.SetWakeStamp(stamped.now().Format(time.RFC3339))
					stamped.Step()
					twin.Step()
					got, want := stamped.autoStop(t), twin.autoStop(t)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("step %d: a fresh stamp on an engine running %d replica(s) changed status.autoStop: -without +with:\n%s", stamped.step, replicas, diff)
					}
					if *got.Replicas != int32(replicas) || got.Reason != tc.want {
						t.Fatalf("step %d: %+v, want %d replica(s), %s", stamped.step, got, replicas, tc.want)
					}
					if tc.want == "ActivityObserved" && name == "Busy" && !got.LastActivityTime.Time.Equal(stamped.now()) {
						t.Errorf("step %d: busy engine's lastActivityTime %v, want it refreshed to %s", stamped.step, got.LastActivityTime, stamped.now())
					}
					c := stamped.conditions[engine.TypeAutoStop]
					if c.GetReason() != tc.want || !strings.Contains(c.GetMessage(), "a stamp wakes only a stopped engine") {
						t.Errorf("step %d: AutoStop condition %s %q, want reason %s saying the stamp is ignored", stamped.step, c.GetReason(), c.GetMessage(), tc.want)
					}
					if ok, why := stamped.Converged(); !ok {
						t.Fatalf("step %d: the stamped engine moved: %s", stamped.step, why)
					}
				}
				if name != "Idle" {
					return
				}
				// Past idleTimeout the twin stops; demand keeps the stamped
				// engine up at activeReplicas.
				woken := false
				for range 12 {
					stamped.SetWakeStamp(stamped.now().Format(time.RFC3339))
					stamped.Step()
					twin.Step()
					a := stamped.autoStop(t)
					woken = woken || a.Reason == "WakeRequested"
					if *a.Replicas == 0 {
						t.Fatalf("step %d: an idle engine with fresh demand was stopped: %+v", stamped.step, a)
					}
				}
				if a := stamped.autoStop(t); *a.Replicas != 1 {
					t.Fatalf("an idle engine with fresh demand at %d replica(s), want activeReplicas (1)", *a.Replicas)
				}
				if a := twin.autoStop(t); *a.Replicas != 0 {
					t.Fatalf("the twin without a stamp did not idle to zero: %+v", a)
				}
				if !woken {
					t.Errorf("the stamp never decided (WakeRequested) on an engine its quiet would stop")
				}
			})
		}
	}
}
