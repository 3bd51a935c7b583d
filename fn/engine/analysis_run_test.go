package engine_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

// fakeChecker answers every check with its current outcome and remembers
// the expressions it was asked.
type fakeChecker struct {
	mu    sync.Mutex
	data  bool
	exprs []string
}

func (f *fakeChecker) Run(_ context.Context, q v1alpha1.PrometheusQuery, _ promcheck.Credentials, _ time.Time) promcheck.Outcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exprs = append(f.exprs, q.Expr)
	if f.data {
		return promcheck.Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"}
	}
	return promcheck.Outcome{Message: "returned no data"}
}

// analysisSpec is a two-replica engine of image whose new generations are
// analysed: 20 s of initial delay, a check every 10 s (one simulator
// step), two successes in a row.
func analysisSpec(image string) map[string]any {
	spec := fixtureSpec(image, 2)
	spec["analysis"] = map[string]any{
		"initialDelaySeconds": float64(20), "periodSeconds": float64(10), "successThreshold": float64(2),
		"query": map[string]any{"expr": `sum(firebolt_running_queries{generation="${GENERATION}"}) < 1`, "url": "http://prometheus.monitoring:9090"},
	}
	return spec
}

// Issue 11, part 2, through RunFunction against the simulated control
// plane: a new generation whose checks return no data is held in creating
// with every pod ready, the routing Service on the old generation and the
// Analysis condition naming the query; once the checks return data twice
// in a row the engine switches and settles. The first generation of an
// engine is not analysed.
func TestAnalysisHoldsTheSwitch(t *testing.T) {
	delay := 0
	s := newSim(t, scripted{podDelay: &delay}, analysisSpec("ghcr.io/firebolt-db/engine:4.29"))
	check := &fakeChecker{}
	s.f = fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
		v1alpha1.XFireboltEngineKind: engine.New(simProber{s}, simEvents{s}, engine.WithClock(s.now), engine.WithChecker(check)),
	})
	settle(t, s, "create")
	if len(check.exprs) != 0 || s.Status().Analysis != nil {
		t.Fatalf("the first generation was analysed: %d checks, status %+v", len(check.exprs), s.Status().Analysis)
	}
	old := s.Status().ActiveGeneration

	s.SetSpec(analysisSpec("ghcr.io/firebolt-db/engine:4.30"))
	for range 12 {
		s.Step()
	}
	st := s.Status()
	if st.Phase != v1alpha1.EnginePhaseCreating || st.ActiveGeneration != old || selectedGeneration(s.objs[engine.RoutingServiceKey].content) != old {
		t.Fatalf("failing checks did not hold the switch: phase %s, active %d (was %d)\n%s", st.Phase, st.ActiveGeneration, old, s.historyText())
	}
	n := st.CurrentGeneration
	a := st.Analysis
	if a == nil || int(a.Generation) != n || a.Passed || a.ConsecutiveFailedChecks < 5 {
		t.Fatalf("status.analysis after 12 steps of failing checks: %+v", a)
	}
	want := `sum(firebolt_running_queries{generation="` + strconv.Itoa(n) + `"}) < 1`
	if got := check.exprs[len(check.exprs)-1]; got != want {
		t.Errorf("the check ran %q, want the generation substituted: %q", got, want)
	}
	c := s.conditions[engine.TypeAnalysis]
	if c.GetReason() != engine.ReasonAnalysisFailing || !strings.Contains(c.GetMessage(), want) || !strings.Contains(c.GetMessage(), "returned no data") {
		t.Errorf("Analysis condition %s %q, want %s naming the query and its last result", c.GetReason(), c.GetMessage(), engine.ReasonAnalysisFailing)
	}

	check.mu.Lock()
	check.data = true
	check.mu.Unlock()
	settle(t, s, "analysis passes")
	if st := s.Status(); st.ActiveGeneration != n || st.Analysis == nil || !st.Analysis.Passed {
		t.Fatalf("after the checks passed: active %d (want %d), analysis %+v", st.ActiveGeneration, n, st.Analysis)
	}
	if c := s.conditions[engine.TypeAnalysis]; c.GetReason() != engine.ReasonAnalysisPassed {
		t.Errorf("Analysis condition %s %q after the switch, want %s", c.GetReason(), c.GetMessage(), engine.ReasonAnalysisPassed)
	}
}
