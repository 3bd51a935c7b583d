package e2e

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Issue 11, part 2, on the real control plane with a real Prometheus: an
// engine with spec.analysis rolls a new generation, and the routing
// Service stays on the old one while the query, selecting the new
// generation's pods through ${GENERATION}, returns no data; once it returns
// data the engine switches and settles.
func TestEngineAnalysisHoldsTheSwitch(t *testing.T) {
	s := newScenario(t, "s-analysis")
	const promAddr = "127.0.0.1:19091"
	s.prometheusAndInstance(promAddr, "demo")

	name := "an"
	expr := fmt.Sprintf(`sum(firebolt_running_queries{namespace=%q, pod=~"%s-g${GENERATION}-[0-9]+"}) < 1`, s.ns, name)
	eng := s.engine(name, "demo", "", 1)
	set(t, eng, map[string]any{
		"initialDelaySeconds": int64(2), "periodSeconds": int64(2), "successThreshold": int64(2),
		"query": map[string]any{"expr": expr, "url": "http://" + promAddr},
	}, "spec", "analysis")
	s.apply(eng)
	first := s.waitStable(eng, -1)

	// The next generation's pods are busy: its query returns no data.
	next := first.Active + 1
	cp.Pods.Set(s.ns, fmt.Sprintf("%s-g%d-", name, next), harness.Behaviour{Mode: harness.Busy, Running: 1})
	set(t, eng, int64(2), "spec", "replicas")
	s.apply(eng)
	var analysis map[string]any
	held := s.waitEngine(eng, rolloutTimeout, "held in creating by failing checks", func(e engineState) bool {
		u, err := s.get(eng)
		if err != nil || u == nil {
			return false
		}
		analysis, _, _ = unstructured.NestedMap(u.Object, "status", "analysis")
		failed, _, _ := unstructured.NestedInt64(analysis, "consecutiveFailedChecks")
		c := harness.Condition(u, "Analysis")
		return e.Phase == "creating" && e.Current == next && failed >= 3 && c.Reason == "AnalysisFailing"
	})
	if g := s.generations(name); held.Active != first.Active || g.Selector != first.Active {
		t.Fatalf("failing checks did not hold the switch: %s %s", held, g)
	}
	if gen, _, _ := unstructured.NestedInt64(analysis, "generation"); gen != next {
		t.Errorf("status.analysis is of generation %d, want %d: %v", gen, next, analysis)
	}

	// Quiet pods: the checks pass, the engine switches and settles.
	cp.Pods.Set(s.ns, fmt.Sprintf("%s-g%d-", name, next), harness.Behaviour{Mode: harness.Idle})
	done := s.waitStable(eng, first.Active)
	if done.Active != next {
		t.Errorf("settled on generation %d, want %d", done.Active, next)
	}
	s.wait(rolloutTimeout, "the Analysis condition AnalysisPassed", func(context.Context) (bool, string, error) {
		u, err := s.get(eng)
		if err != nil || u == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		c := harness.Condition(u, "Analysis")
		return c.Reason == "AnalysisPassed", c.String(), nil
	})
}
