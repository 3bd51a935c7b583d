// Package metrics holds the function's own Prometheus metrics: what it
// composes, how long that takes, where every engine is in its rollout, and
// how its drain checks go. The function registers them on the registry the
// SDK serves its gRPC server metrics from, so one endpoint
// (--metrics-address, /metrics) exposes both.
//
// Callers report through Recorder; the function, the engine composer and
// the drain prober each make one call per event, and Nop stands in where no
// metrics are wanted. Every label value is drawn from a closed set except
// the engine phase gauge's namespace and name, which are bounded by the
// engines this process composes (see EnginePhaseMaxEngines and the expiry).
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// Prefix starts every metric name this package exports.
const Prefix = "function_firebolt_"

// KindOther is the kind label of a call whose composite is of no kind this
// function composes (or could not be decoded): such kinds come from the
// request and must not grow the label set.
const KindOther = "other"

// A Recorder is told what the function did. Implementations are safe for
// concurrent use.
type Recorder interface {
	// Composed reports one RunFunction call: the observed composite's kind,
	// how long the call took and the results it returned.
	Composed(kind string, took time.Duration, results []*fnv1.Result)
	// EngineComposed reports one engine composed: the phase it was observed
	// in and the phase this call wrote.
	EngineComposed(e Engine)
	// DrainChecked reports one drain check and the causes of its errors.
	DrainChecked(d DrainCheck)
	// EngineDrainCheckFailed reports one drain check of engine e that
	// failed (the verdict said Failing): the original operator counts
	// these per engine.
	EngineDrainCheckFailed(e EngineRef)
	// AutoStopDecided reports one auto-stop decision by its reason.
	AutoStopDecided(reason autostop.Reason)
	// RolloutChecked reports one Prometheus check of a phased rollout.
	RolloutChecked(o promcheck.Outcome)
}

// CheckOutcome is a phased rollout check's result.
type CheckOutcome string

// Check outcomes: the query returned data (the check succeeded), returned
// none, or could not be run or read (see the cause).
const (
	CheckData   CheckOutcome = "data"
	CheckNoData CheckOutcome = "no_data"
	CheckError  CheckOutcome = "error"
)

// CheckOutcomeOf classifies a check's outcome.
func CheckOutcomeOf(o promcheck.Outcome) CheckOutcome {
	switch {
	case o.Cause != "":
		return CheckError
	case o.Succeeded:
		return CheckData
	default:
		return CheckNoData
	}
}

// Engine is one composed XFireboltEngine, named by its claim.
type Engine struct {
	Namespace string
	Name      string
	// From is the phase in the observed status, empty on the first call;
	// To is the phase this call wrote.
	From string
	To   string
	// Deleting is true when the composite has a deletionTimestamp: the
	// engine's series go at once.
	Deleting bool
	// TTL is when this call asked Crossplane to call again; the engine's
	// series expire after several such intervals without a call.
	TTL time.Duration
}

// EngineRef names an engine by its claim's namespace and name.
type EngineRef struct {
	Namespace string
	Name      string
}

// EngineDrainCounter counts failed drain checks per engine. The counts
// live with the engine state metrics (package statemetrics), whose series
// go when the engine does, so Metrics hands the events on.
type EngineDrainCounter interface {
	DrainCheckFailed(e EngineRef)
}

// DrainOutcome is a drain check's result.
type DrainOutcome string

// Drain outcomes.
const (
	DrainDrained DrainOutcome = "drained"
	DrainBusy    DrainOutcome = "busy"
	DrainFailing DrainOutcome = "failing"
)

// DrainCheck is one drain check.
type DrainCheck struct {
	Outcome DrainOutcome
	// Causes holds one entry per error the check saw: the check's own (it
	// could not list or start), or one per pod it could not scrape.
	Causes []scrape.Cause
}

// Outcome classifies a verdict.
func Outcome(v scrape.Verdict) DrainOutcome {
	switch {
	case v.Drained:
		return DrainDrained
	case v.Failing:
		return DrainFailing
	default:
		return DrainBusy
	}
}

// Nop records nothing.
type Nop struct{}

// RolloutChecked does nothing.
func (Nop) RolloutChecked(promcheck.Outcome) {}

// Composed does nothing.
func (Nop) Composed(string, time.Duration, []*fnv1.Result) {}

// EngineComposed does nothing.
func (Nop) EngineComposed(Engine) {}

// DrainChecked does nothing.
func (Nop) DrainChecked(DrainCheck) {}

// EngineDrainCheckFailed does nothing.
func (Nop) EngineDrainCheckFailed(EngineRef) {}

// AutoStopDecided does nothing.
func (Nop) AutoStopDecided(autostop.Reason) {}

// Metrics records to Prometheus metrics registered on one registry.
type Metrics struct {
	kinds map[string]bool

	composeDuration *prometheus.HistogramVec
	results         *prometheus.CounterVec
	rollout         prometheus.Histogram
	drainChecks     *prometheus.CounterVec
	scrapeErrors    *prometheus.CounterVec
	autoStop        *prometheus.CounterVec
	autoStopReasons map[autostop.Reason]bool
	checks          *prometheus.CounterVec
	checkErrors     *prometheus.CounterVec
	checkCauses     map[promcheck.Cause]bool
	engines         *engines
	engineDrains    EngineDrainCounter
}

// An Option configures Metrics.
type Option func(*Metrics)

// WithClock replaces the wall clock the rollout duration and the phase
// gauge's expiry read, for tests.
func WithClock(now func() time.Time) Option {
	return func(m *Metrics) { m.engines.now = now }
}

// WithEngineDrainCounter hands every failed drain check of an engine to c.
// Without it they are not counted per engine.
func WithEngineDrainCounter(c EngineDrainCounter) Option {
	return func(m *Metrics) { m.engineDrains = c }
}

// WithMaxEngines replaces EnginePhaseMaxEngines, for tests.
func WithMaxEngines(n int) Option {
	return func(m *Metrics) { m.engines.max = n }
}

// severities are the result severity label values, by protobuf severity.
var severities = map[fnv1.Severity]string{
	fnv1.Severity_SEVERITY_UNSPECIFIED: "unspecified",
	fnv1.Severity_SEVERITY_FATAL:       "fatal",
	fnv1.Severity_SEVERITY_WARNING:     "warning",
	fnv1.Severity_SEVERITY_NORMAL:      "normal",
}

// New creates the metrics and registers them on reg. kinds are the composite
// kinds the function composes; every other kind is recorded as KindOther.
// Every series of a closed label set starts at zero, so a rate over it
// exists before the first event.
func New(reg prometheus.Registerer, kinds []string, o ...Option) (*Metrics, error) {
	m := &Metrics{
		kinds: make(map[string]bool, len(kinds)),
		composeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: Prefix + "compose_duration_seconds",
			Help: "Time one RunFunction call took, by the observed composite's kind.",
			// 0.5 ms to 4 s: a stable engine takes about a millisecond, a
			// drain check up to its overall timeout.
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"kind"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: Prefix + "results_total",
			Help: "Results returned to Crossplane, by the composite's kind and the result's severity.",
		}, []string{"kind", "severity"}),
		rollout: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: Prefix + "engine_rollout_duration_seconds",
			Help: "Time from an engine entering creating to it reaching stable, for rollouts this process saw begin and end.",
			// 1 s to about 68 min.
			Buckets: prometheus.ExponentialBuckets(1, 2, 13),
		}),
		drainChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: Prefix + "drain_checks_total",
			Help: "Drain checks of a draining generation, by outcome (drained, busy, failing).",
		}, []string{"outcome"}),
		scrapeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: Prefix + "scrape_errors_total",
			Help: "Errors of drain checks: one per check that could not scrape at all, one per pod that could not be scraped, by cause.",
		}, []string{"cause"}),
		autoStop: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: Prefix + "autostop_decisions_total",
			Help: "Auto-stop decisions of engines with auto-stop enabled, one per call, by the reason in status.autoStop.",
		}, []string{"reason"}),
		autoStopReasons: map[autostop.Reason]bool{},
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: Prefix + "rollout_checks_total",
			Help: "Prometheus checks of phased rollouts and engine analyses, by outcome (data: the check succeeded, no_data, error).",
		}, []string{"outcome"}),
		checkErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: Prefix + "rollout_check_errors_total",
			Help: "Checks of phased rollouts and engine analyses that could not be run or read, by cause.",
		}, []string{"cause"}),
		checkCauses: map[promcheck.Cause]bool{},
		engines:     newEngines(),
	}
	for _, k := range kinds {
		m.kinds[k] = true
	}
	for _, fn := range o {
		fn(m)
	}
	for _, k := range append(append([]string{}, kinds...), KindOther) {
		for _, s := range severities {
			m.results.WithLabelValues(k, s)
		}
	}
	for _, d := range []DrainOutcome{DrainDrained, DrainBusy, DrainFailing} {
		m.drainChecks.WithLabelValues(string(d))
	}
	for _, c := range scrape.Causes {
		m.scrapeErrors.WithLabelValues(string(c))
	}
	for _, r := range autostop.Reasons {
		m.autoStop.WithLabelValues(string(r))
		m.autoStopReasons[r] = true
	}
	for _, o := range []CheckOutcome{CheckData, CheckNoData, CheckError} {
		m.checks.WithLabelValues(string(o))
	}
	for _, c := range promcheck.Causes {
		m.checkErrors.WithLabelValues(string(c))
		m.checkCauses[c] = true
	}
	for _, c := range []prometheus.Collector{m.composeDuration, m.results, m.rollout, m.drainChecks, m.scrapeErrors, m.autoStop, m.checks, m.checkErrors, m.engines} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Composed implements Recorder.
func (m *Metrics) Composed(kind string, took time.Duration, results []*fnv1.Result) {
	if !m.kinds[kind] {
		kind = KindOther
	}
	m.composeDuration.WithLabelValues(kind).Observe(took.Seconds())
	for _, r := range results {
		s, ok := severities[r.GetSeverity()]
		if !ok {
			s = severities[fnv1.Severity_SEVERITY_UNSPECIFIED]
		}
		m.results.WithLabelValues(kind, s).Inc()
	}
}

// EngineComposed implements Recorder.
func (m *Metrics) EngineComposed(e Engine) {
	if took, ok := m.engines.observe(e); ok {
		m.rollout.Observe(took.Seconds())
	}
}

// DrainChecked implements Recorder.
func (m *Metrics) DrainChecked(d DrainCheck) {
	m.drainChecks.WithLabelValues(string(d.Outcome)).Inc()
	for _, c := range d.Causes {
		m.scrapeErrors.WithLabelValues(string(c)).Inc()
	}
}

// EngineDrainCheckFailed implements Recorder.
func (m *Metrics) EngineDrainCheckFailed(e EngineRef) {
	if m.engineDrains != nil {
		m.engineDrains.DrainCheckFailed(e)
	}
}

// AutoStopDecided implements Recorder. A reason outside the closed set (a
// status the function did not write) is not counted: it must not grow the
// label set.
func (m *Metrics) AutoStopDecided(reason autostop.Reason) {
	if m.autoStopReasons[reason] {
		m.autoStop.WithLabelValues(string(reason)).Inc()
	}
}

// RolloutChecked implements Recorder. A cause outside promcheck's closed
// set is not counted as a cause: it must not grow the label set.
func (m *Metrics) RolloutChecked(o promcheck.Outcome) {
	m.checks.WithLabelValues(string(CheckOutcomeOf(o))).Inc()
	if m.checkCauses[o.Cause] {
		m.checkErrors.WithLabelValues(string(o.Cause)).Inc()
	}
}
