package metrics

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

var epoch = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// clock is a settable clock for one test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTest(t *testing.T, o ...Option) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := New(reg, []string{"XFireboltEngine"}, o...)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

const phaseHeader = `# HELP function_firebolt_engine_phase The rollout phase of every engine this process composed recently: 1 on the series of its current phase.
# TYPE function_firebolt_engine_phase gauge
`

func TestEngineComposed(t *testing.T) {
	type step struct {
		// after is how long after the previous step this one happens.
		after time.Duration
		e     Engine
	}
	e := func(from, to string) Engine {
		return Engine{Namespace: "ns", Name: "demo", From: from, To: to, TTL: time.Second}
	}
	cases := map[string]struct {
		reason string
		max    int
		steps  []step
		// gather is how long after the last step the metrics are read.
		gather time.Duration
		phase  string
		// rollouts are the rollout durations observed, in seconds.
		rollouts []float64
	}{
		"FirstRollout": {
			reason: "A new engine's way from nothing through creating to stable is a rollout.",
			steps: []step{{0, e("", "creating")}, {5 * time.Second, e("creating", "creating")}, {10 * time.Second, e("creating", "switching")},
				{time.Second, e("switching", "stable")}},
			phase:    `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
			rollouts: []float64{16},
		},
		"EditRollout": {
			reason: "An edit of a stable engine rolls from creating through draining and cleaning back to stable.",
			steps: []step{{0, e("stable", "stable")}, {time.Minute, e("stable", "creating")}, {3 * time.Second, e("creating", "switching")},
				{time.Second, e("switching", "draining")}, {time.Second, e("draining", "cleaning")}, {time.Second, e("cleaning", "stable")}},
			phase:    `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
			rollouts: []float64{6},
		},
		"InPlaceUpdate": {
			reason: "An in-place update (rollout: phased) is a rollout from updating to stable; one a topology change takes over ends when the new generation is stable.",
			steps: []step{{0, e("stable", "stable")}, {time.Minute, e("stable", "updating")}, {3 * time.Second, e("updating", "updating")},
				{4 * time.Second, e("updating", "stable")}, {time.Minute, e("stable", "updating")}, {time.Second, e("updating", "creating")},
				{2 * time.Second, e("creating", "switching")}, {time.Second, e("switching", "stable")}},
			phase:    `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
			rollouts: []float64{7, 4},
		},
		"StartNotSeen": {
			reason: "A rollout whose start this process did not see (it started mid-rollout) is not observed: its duration is unknown.",
			steps:  []step{{0, e("creating", "switching")}, {time.Second, e("switching", "stable")}},
			phase:  `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
		},
		"RepeatedCalls": {
			reason: "A call repeated because Crossplane did not write its status repeats the transition; the start stays and the end counts once.",
			steps: []step{{0, e("stable", "creating")}, {2 * time.Second, e("stable", "creating")}, {2 * time.Second, e("creating", "stable")},
				{time.Second, e("creating", "stable")}},
			phase:    `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
			rollouts: []float64{4},
		},
		"StoppedMidRollout": {
			reason: "An engine stopped mid-rollout never completes that rollout; starting it again starts a new one.",
			steps: []step{{0, e("stable", "creating")}, {time.Second, e("creating", "stopped")}, {time.Hour, e("stopped", "creating")},
				{2 * time.Second, e("creating", "stable")}},
			phase:    `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
			rollouts: []float64{2},
		},
		"Deleting": {
			reason: "A composite with a deletionTimestamp drops its engine's series at once.",
			steps:  []step{{0, e("stable", "stable")}, {time.Second, Engine{Namespace: "ns", Name: "demo", From: "stable", To: "stable", Deleting: true}}},
		},
		"Expired": {
			reason: "An engine not composed for ExpiryPolls of its TTLs, and at least MinExpiry, is gone.",
			steps:  []step{{0, Engine{Namespace: "ns", Name: "demo", From: "stable", To: "stable", TTL: time.Hour}}},
			gather: ExpiryPolls*time.Hour + time.Second,
		},
		"NotYetExpired": {
			reason: "An engine whose TTL is long keeps its series for ExpiryPolls of them.",
			steps:  []step{{0, Engine{Namespace: "ns", Name: "demo", From: "stable", To: "stable", TTL: time.Hour}}},
			gather: ExpiryPolls * time.Hour,
			phase:  `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
		},
		"MinExpiry": {
			reason: "A short TTL does not expire an engine before MinExpiry.",
			steps:  []step{{0, e("stable", "stable")}},
			gather: MinExpiry,
			phase:  `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
		},
		"MaxEngines": {
			reason: "Engines beyond the bound have no series; those tracked keep theirs.",
			max:    1,
			steps: []step{{0, e("stable", "stable")}, {0, Engine{Namespace: "ns", Name: "other", From: "", To: "creating", TTL: time.Second}},
				{time.Second, Engine{Namespace: "ns", Name: "other", From: "creating", To: "stable", TTL: time.Second}}},
			phase: `function_firebolt_engine_phase{name="demo",namespace="ns",phase="stable"} 1` + "\n",
		},
		"NoClaim": {
			reason: "A composite without claim labels names no engine and has no series.",
			steps:  []step{{0, Engine{From: "", To: "creating"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := &clock{t: epoch}
			o := []Option{WithClock(c.now)}
			if tc.max != 0 {
				o = append(o, WithMaxEngines(tc.max))
			}
			m, reg := newTest(t, o...)
			for _, s := range tc.steps {
				c.t = c.t.Add(s.after)
				m.EngineComposed(s.e)
			}
			c.t = c.t.Add(tc.gather)

			want := ""
			if tc.phase != "" {
				want = phaseHeader + tc.phase
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "function_firebolt_engine_phase"); err != nil {
				t.Errorf("%s\nphase gauge: %v", tc.reason, err)
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(histogram(tc.rollouts)), "function_firebolt_engine_rollout_duration_seconds"); err != nil {
				t.Errorf("%s\nrollout histogram: %v", tc.reason, err)
			}
		})
	}
}

// histogram renders the rollout histogram holding observations.
func histogram(obs []float64) string {
	var b strings.Builder
	b.WriteString("# HELP function_firebolt_engine_rollout_duration_seconds Time from an engine entering creating to it reaching stable, for rollouts this process saw begin and end.\n")
	b.WriteString("# TYPE function_firebolt_engine_rollout_duration_seconds histogram\n")
	sum := 0.0
	for _, o := range obs {
		sum += o
	}
	for _, le := range prometheus.ExponentialBuckets(1, 2, 13) {
		n := 0
		for _, o := range obs {
			if o <= le {
				n++
			}
		}
		b.WriteString("function_firebolt_engine_rollout_duration_seconds_bucket{le=\"" + formatFloat(le) + "\"} " + itoa(n) + "\n")
	}
	b.WriteString("function_firebolt_engine_rollout_duration_seconds_bucket{le=\"+Inf\"} " + itoa(len(obs)) + "\n")
	b.WriteString("function_firebolt_engine_rollout_duration_seconds_sum " + formatFloat(sum) + "\n")
	b.WriteString("function_firebolt_engine_rollout_duration_seconds_count " + itoa(len(obs)) + "\n")
	return b.String()
}

func TestComposed(t *testing.T) {
	m, reg := newTest(t)
	fatal := &fnv1.Result{Severity: fnv1.Severity_SEVERITY_FATAL}
	normal := &fnv1.Result{Severity: fnv1.Severity_SEVERITY_NORMAL}
	m.Composed("XFireboltEngine", time.Millisecond, []*fnv1.Result{normal, normal})
	m.Composed("XFireboltEngine", time.Millisecond, nil)
	// Kinds come from the request: one this function does not compose
	// must not add a label value.
	m.Composed("XSomethingElse", time.Millisecond, []*fnv1.Result{fatal})
	m.Composed("", time.Millisecond, []*fnv1.Result{fatal})

	want := `# HELP function_firebolt_results_total Results returned to Crossplane, by the composite's kind and the result's severity.
# TYPE function_firebolt_results_total counter
function_firebolt_results_total{kind="XFireboltEngine",severity="fatal"} 0
function_firebolt_results_total{kind="XFireboltEngine",severity="normal"} 2
function_firebolt_results_total{kind="XFireboltEngine",severity="unspecified"} 0
function_firebolt_results_total{kind="XFireboltEngine",severity="warning"} 0
function_firebolt_results_total{kind="other",severity="fatal"} 2
function_firebolt_results_total{kind="other",severity="normal"} 0
function_firebolt_results_total{kind="other",severity="unspecified"} 0
function_firebolt_results_total{kind="other",severity="warning"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "function_firebolt_results_total"); err != nil {
		t.Error(err)
	}
	// Durations are real time; their count per kind is what is certain.
	for kind, n := range map[string]int{"XFireboltEngine": 2, KindOther: 2} {
		if got := histogramCount(t, reg, "function_firebolt_compose_duration_seconds", kind); got != uint64(n) {
			t.Errorf("compose duration count for %s: %d, want %d", kind, got, n)
		}
	}
}

func TestDrainChecked(t *testing.T) {
	m, reg := newTest(t)
	m.DrainChecked(DrainCheck{Outcome: Outcome(scrape.Verdict{Drained: true})})
	m.DrainChecked(DrainCheck{Outcome: Outcome(scrape.Verdict{Message: "pod a: 1 running"})})
	m.DrainChecked(DrainCheck{Outcome: Outcome(scrape.Verdict{Failing: true, Message: "x"}), Causes: []scrape.Cause{scrape.CauseTimeout, scrape.CauseTimeout, scrape.CauseHTTPStatus}})

	var want strings.Builder
	want.WriteString(`# HELP function_firebolt_drain_checks_total Drain checks of a draining generation, by outcome (drained, busy, failing).
# TYPE function_firebolt_drain_checks_total counter
function_firebolt_drain_checks_total{outcome="busy"} 1
function_firebolt_drain_checks_total{outcome="drained"} 1
function_firebolt_drain_checks_total{outcome="failing"} 1
# HELP function_firebolt_scrape_errors_total Errors of drain checks: one per check that could not scrape at all, one per pod that could not be scraped, by cause.
# TYPE function_firebolt_scrape_errors_total counter
`)
	counts := map[scrape.Cause]int{scrape.CauseTimeout: 2, scrape.CauseHTTPStatus: 1}
	for _, c := range []string{"body_too_large", "config", "http_status", "list", "no_slot", "panic", "parse", "timeout", "transport"} {
		want.WriteString(`function_firebolt_scrape_errors_total{cause="` + c + `"} ` + itoa(counts[scrape.Cause(c)]) + "\n")
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "function_firebolt_drain_checks_total", "function_firebolt_scrape_errors_total"); err != nil {
		t.Error(err)
	}
}

// TestRegistersOnce: a second set of metrics on the same registry is
// refused rather than silently sharing series.
func TestRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(reg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := New(reg, nil); err == nil {
		t.Error("registering twice on one registry succeeded")
	}
}

func TestRolloutChecked(t *testing.T) {
	m, reg := newTest(t)
	m.RolloutChecked(promcheck.Outcome{Succeeded: true, Series: 2})
	m.RolloutChecked(promcheck.Outcome{})
	m.RolloutChecked(promcheck.Outcome{Cause: promcheck.CauseTimeout, Message: "timed out"})
	m.RolloutChecked(promcheck.Outcome{Cause: promcheck.CauseTimeout})
	// A cause from outside the closed set counts as an error, not a label.
	m.RolloutChecked(promcheck.Outcome{Cause: "made-up"})

	var want strings.Builder
	want.WriteString(`# HELP function_firebolt_rollout_checks_total Prometheus checks of phased rollouts and engine analyses, by outcome (data: the check succeeded, no_data, error).
# TYPE function_firebolt_rollout_checks_total counter
function_firebolt_rollout_checks_total{outcome="data"} 1
function_firebolt_rollout_checks_total{outcome="error"} 3
function_firebolt_rollout_checks_total{outcome="no_data"} 1
# HELP function_firebolt_rollout_check_errors_total Checks of phased rollouts and engine analyses that could not be run or read, by cause.
# TYPE function_firebolt_rollout_check_errors_total counter
`)
	causes := make([]string, 0, len(promcheck.Causes))
	for _, c := range promcheck.Causes {
		causes = append(causes, string(c))
	}
	slices.Sort(causes)
	for _, c := range causes {
		n := 0
		if c == string(promcheck.CauseTimeout) {
			n = 2
		}
		want.WriteString(`function_firebolt_rollout_check_errors_total{cause="` + c + `"} ` + itoa(n) + "\n")
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "function_firebolt_rollout_checks_total", "function_firebolt_rollout_check_errors_total"); err != nil {
		t.Error(err)
	}
}
