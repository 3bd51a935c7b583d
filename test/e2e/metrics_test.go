package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario: the function's own metrics, scraped from its metrics endpoint
// while it rolls an engine out. The phase gauge follows the engine through
// creating to stable, and the rollout histogram counts the rollout.
// Other scenarios run meanwhile and roll engines of their own, so the
// histogram is asserted to have moved, and the gauge read for this
// scenario's namespace only.
func TestMetricsDuringRollout(t *testing.T) {
	s := newScenario(t, "s-metrics")
	eng, st := s.stableEngine("demo", 2)
	old := st.Active

	m := s.scrapeFunction(s.ctx)
	if got := m.phases(s.ns, "demo"); len(got) != 1 || got["stable"] != 1 {
		t.Errorf("engine phase gauge of a stable engine: got %v, want only stable=1", got)
	}
	before := m.histogramCount("function_firebolt_engine_rollout_duration_seconds")
	if before < 1 {
		// The engine's first rollout (from nothing to stable) counts too.
		t.Errorf("rollout histogram count after the first rollout: got %d, want at least 1", before)
	}

	s.apply(withHold(t, s.engine("demo", "demo", "", 3)))
	st = s.waitEngine(eng, rolloutTimeout, "creating a new generation", func(e engineState) bool {
		return e.Phase == "creating" && e.Current > old
	})
	// The pods are held, so the engine stays in creating while it is read.
	s.wait(rolloutTimeout, "the phase gauge at creating", func(ctx context.Context) (bool, string, error) {
		got := s.scrapeFunction(ctx).phases(s.ns, "demo")
		return len(got) == 1 && got["creating"] == 1, fmt.Sprint(got), nil
	})

	s.release("demo", st.Current, 3)
	s.waitStable(eng, old)
	m = s.scrapeFunction(s.ctx)
	if got := m.phases(s.ns, "demo"); len(got) != 1 || got["stable"] != 1 {
		t.Errorf("engine phase gauge after the rollout: got %v, want only stable=1", got)
	}
	if after := m.histogramCount("function_firebolt_engine_rollout_duration_seconds"); after <= before {
		t.Errorf("rollout histogram count: %d before the rollout, %d after; want it to grow", before, after)
	}
	if n := m.histogramCount("function_firebolt_compose_duration_seconds"); n == 0 {
		t.Error("compose duration histogram never observed a call")
	}
}

// scraped is one scrape of the function's metrics endpoint.
type scraped map[string]*dto.MetricFamily

// scrapeFunction reads and parses the function's /metrics.
func (s *scenario) scrapeFunction(ctx context.Context) scraped {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+harness.FunctionMetricsAddress+"/metrics", nil)
	s.must(err)
	resp, err := http.DefaultClient.Do(req)
	s.must(err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	s.must(err)
	return fams
}

// phases returns the engine phase gauge's series of one engine by phase.
func (m scraped) phases(namespace, name string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m["function_firebolt_engine_phase"].GetMetric() {
		l := map[string]string{}
		for _, p := range s.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["namespace"] == namespace && l["name"] == name {
			out[l["phase"]] += s.GetGauge().GetValue()
		}
	}
	return out
}

// histogramCount sums a histogram family's sample counts over its series.
func (m scraped) histogramCount(name string) uint64 {
	var n uint64
	for _, s := range m[name].GetMetric() {
		n += s.GetHistogram().GetSampleCount()
	}
	return n
}
