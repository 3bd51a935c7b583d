package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
)

// counted counts the calls that reach a composer and the results they
// return, independently of the metrics.
type counted struct {
	fn.Composer
	calls   int
	results map[string]int
}

func (c *counted) Compose(ctx context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	c.calls++
	err := c.Composer.Compose(ctx, call, rsp)
	for _, r := range rsp.GetResults() {
		c.results[strings.ToLower(strings.TrimPrefix(r.GetSeverity().String(), "SEVERITY_"))]++
	}
	return err
}

// TestMetricsThroughRunFunction drives a simulated engine through its first
// rollout, an edit's rollout and its deletion over RunFunction, with the
// function's metrics on a fresh registry, and reads them back.
func TestMetricsThroughRunFunction(t *testing.T) {
	delay := 0
	s := newSim(t, scripted{podDelay: &delay}, fixtureSpec("ghcr.io/firebolt-db/engine:4.29", 2))
	reg := prometheus.NewPedanticRegistry()
	m, err := metrics.New(reg, fn.Kinds(), metrics.WithClock(s.now))
	if err != nil {
		t.Fatal(err)
	}
	c := &counted{Composer: engine.New(simProber{s}, simEvents{s}, engine.WithClock(s.now), engine.WithMetrics(m)), results: map[string]int{}}
	s.f = fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c}, fn.WithMetrics(m))

	// The rollouts as the status shows them: from the step the status
	// first reads creating to the step it reads stable.
	var start time.Time
	var rollouts []time.Duration
	seen := map[v1alpha1.EnginePhase]bool{}
	step := func() {
		t.Helper()
		pre := s.Status().Phase
		s.Step()
		post := s.Status().Phase
		switch {
		case post == v1alpha1.EnginePhaseCreating && pre != post && start.IsZero():
			start = s.now()
		case post == v1alpha1.EnginePhaseStable && pre != post && !start.IsZero():
			rollouts = append(rollouts, s.now().Sub(start))
			start = time.Time{}
		}
		if got := phases(t, reg); post != "" && !cmp.Equal(got, map[string]float64{string(post): 1}) {
			t.Fatalf("step %d: status phase %s, engine phase gauge %v", s.step, post, got)
		}
		seen[post] = true
	}
	until := func(p v1alpha1.EnginePhase) {
		t.Helper()
		for i := 0; s.Status().Phase != p; i++ {
			if i == 30 {
				t.Fatalf("never %s: %v", p, s.history)
			}
			step()
		}
	}
	until(v1alpha1.EnginePhaseStable)
	step()
	s.SetSpec(fixtureSpec("ghcr.io/firebolt-db/engine:4.30", 3))
	until(v1alpha1.EnginePhaseCreating)
	until(v1alpha1.EnginePhaseStable)
	for _, p := range []v1alpha1.EnginePhase{v1alpha1.EnginePhaseCreating, v1alpha1.EnginePhaseSwitching, v1alpha1.EnginePhaseDraining, v1alpha1.EnginePhaseCleaning, v1alpha1.EnginePhaseStable} {
		if !seen[p] {
			t.Errorf("the rollouts never went through %s, so the gauge was not read there", p)
		}
	}

	if len(rollouts) != 2 {
		t.Fatalf("the status shows %d rollouts, want 2 (the first and the edit's)", len(rollouts))
	}
	h := family(t, reg, "function_firebolt_engine_rollout_duration_seconds").GetMetric()[0].GetHistogram()
	var sum float64
	for _, d := range rollouts {
		sum += d.Seconds()
	}
	if h.GetSampleCount() != uint64(len(rollouts)) || h.GetSampleSum() != sum {
		t.Errorf("rollout histogram: count %d, sum %v; want %d and %v (rollouts %v)", h.GetSampleCount(), h.GetSampleSum(), len(rollouts), sum, rollouts)
	}

	// One compose duration observation and one result count per call.
	counts := map[string]uint64{}
	for _, mm := range family(t, reg, "function_firebolt_compose_duration_seconds").GetMetric() {
		counts[label(mm, "kind")] = mm.GetHistogram().GetSampleCount()
	}
	if d := cmp.Diff(map[string]uint64{v1alpha1.XFireboltEngineKind: uint64(c.calls)}, counts); d != "" {
		t.Errorf("compose duration counts by kind (-want +got):\n%s", d)
	}
	got := map[string]int{}
	for _, mm := range family(t, reg, "function_firebolt_results_total").GetMetric() {
		if v := int(mm.GetCounter().GetValue()); v != 0 {
			got[label(mm, "kind")+"/"+label(mm, "severity")] = v
		}
	}
	want := map[string]int{}
	for sev, n := range c.results {
		want[v1alpha1.XFireboltEngineKind+"/"+sev] = n
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("results_total (-want +got):\n%s", d)
	}

	// The composite is being deleted: its engine's series goes.
	s.xr.Object["metadata"].(map[string]any)["deletionTimestamp"] = s.now().Format(time.RFC3339)
	s.Step()
	if got := phases(t, reg); len(got) != 0 {
		t.Errorf("engine phase gauge of a deleted engine: %v, want no series", got)
	}
}

// TestDrainCheckMetrics runs the real prober over RunFunction against a
// local API server and reads the drain check and scrape error counters.
func TestDrainCheckMetrics(t *testing.T) {
	// Lists the pods as the fake API server does; every scrape fails.
	pods := fakeAPIServer(t, simNamespace, 2, 0, nil).Config.Handler
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/pods") {
			pods.ServeHTTP(w, r)
			return
		}
		http.Error(w, "engine down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	for name, tc := range map[string]struct {
		prober func(metrics.Recorder) engine.DrainProber
		// outcome is the drain check's; causes, the scrape errors by cause.
		outcome string
		causes  map[string]int
	}{
		"Drained": {
			prober: func(r metrics.Recorder) engine.DrainProber {
				return engine.NewProber(kubeFor(t, fakeAPIServer(t, simNamespace, 2, 0, nil)), engine.WithProberMetrics(r))
			},
			outcome: "drained",
		},
		"Busy": {
			prober: func(r metrics.Recorder) engine.DrainProber {
				return engine.NewProber(kubeFor(t, fakeAPIServer(t, simNamespace, 2, 0, map[string]bool{"demo-g0-1": true})), engine.WithProberMetrics(r))
			},
			outcome: "busy",
		},
		"PodsFailing": {
			prober: func(r metrics.Recorder) engine.DrainProber {
				return engine.NewProber(kubeFor(t, failing), engine.WithProberMetrics(r))
			},
			outcome: "failing",
			causes:  map[string]int{"http_status": 2},
		},
		"NoKubernetesClient": {
			prober:  func(r metrics.Recorder) engine.DrainProber { return engine.NewProber(nil, engine.WithProberMetrics(r)) },
			outcome: "failing",
			causes:  map[string]int{"config": 1},
		},
	} {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			var perEngine engineDrains
			m, err := metrics.New(reg, fn.Kinds(), metrics.WithEngineDrainCounter(&perEngine))
			if err != nil {
				t.Fatal(err)
			}
			req := requestIn(t, 2, v1alpha1.EnginePhaseDraining)
			c := engine.New(tc.prober(m), nil, engine.WithClock(func() time.Time { return responseClock }), engine.WithMetrics(m))
			if _, err := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c}, fn.WithMetrics(m)).RunFunction(context.Background(), req); err != nil {
				t.Fatal(err)
			}

			var want strings.Builder
			want.WriteString("# HELP function_firebolt_drain_checks_total Drain checks of a draining generation, by outcome (drained, busy, failing).\n# TYPE function_firebolt_drain_checks_total counter\n")
			for _, o := range []string{"busy", "drained", "failing"} {
				n := 0
				if o == tc.outcome {
					n = 1
				}
				fmt.Fprintf(&want, "function_firebolt_drain_checks_total{outcome=%q} %d\n", o, n)
			}
			want.WriteString("# HELP function_firebolt_scrape_errors_total Errors of drain checks: one per check that could not scrape at all, one per pod that could not be scraped, by cause.\n# TYPE function_firebolt_scrape_errors_total counter\n")
			for _, c := range []string{"body_too_large", "config", "http_status", "list", "no_slot", "panic", "parse", "timeout", "transport"} {
				fmt.Fprintf(&want, "function_firebolt_scrape_errors_total{cause=%q} %d\n", c, tc.causes[c])
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "function_firebolt_drain_checks_total", "function_firebolt_scrape_errors_total"); err != nil {
				t.Error(err)
			}
			// A failing check counts once against the engine, by its
			// claim; a check that ran counts nothing.
			var wantEngine engineDrains
			if tc.outcome == "failing" {
				wantEngine = engineDrains{{Namespace: simNamespace, Name: simEngine}}
			}
			if diff := cmp.Diff(wantEngine, perEngine); diff != "" {
				t.Errorf("failed drain checks per engine (-want +got):\n%s", diff)
			}
		})
	}
}

// engineDrains records the engines whose drain checks failed.
type engineDrains []metrics.EngineRef

func (d *engineDrains) DrainCheckFailed(e metrics.EngineRef) { *d = append(*d, e) }

// phases reads the engine phase gauge of the simulated engine by phase.
func phases(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range family(t, reg, "function_firebolt_engine_phase").GetMetric() {
		if label(m, "namespace") == simNamespace && label(m, "name") == simEngine {
			out[label(m, "phase")] += m.GetGauge().GetValue()
		}
	}
	return out
}

func family(t *testing.T, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
