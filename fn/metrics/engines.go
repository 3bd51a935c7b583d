package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// EnginePhaseMaxEngines bounds the engines the phase gauge tracks. An engine
// first seen while this many are tracked has no series until one expires;
// it is far above what one function process composes.
const EnginePhaseMaxEngines = 10000

// Expiry of an engine not composed for a while. Crossplane calls the
// function with no deletionTimestamp in practice once a composite is being
// deleted (it deletes without running the pipeline), so a deleted engine is
// mostly noticed by its absence: its series goes once it has missed
// ExpiryPolls of the calls its last TTL asked for, and never sooner than
// MinExpiry, which covers Crossplane's own backoff and restarts.
const (
	ExpiryPolls = 5
	MinExpiry   = 5 * time.Minute
)

// Phases the rollout histogram starts and ends on.
const (
	phaseCreating = "creating"
	phaseUpdating = "updating"
	phaseStable   = "stable"
	phaseStopped  = "stopped"
)

type engineKey struct{ namespace, name string }

type engineState struct {
	phase   string
	expires time.Time
	// creatingSince is when this process saw the engine enter creating;
	// zero when it did not see the rollout begin.
	creatingSince time.Time
}

// engines is the engine phase gauge. It is a collector of its own so that
// expired engines are dropped when the gauge is read, not on the hot path.
type engines struct {
	desc *prometheus.Desc
	now  func() time.Time
	max  int

	mu sync.Mutex
	m  map[engineKey]*engineState
}

func newEngines() *engines {
	return &engines{
		desc: prometheus.NewDesc(Prefix+"engine_phase",
			"The rollout phase of every engine this process composed recently: 1 on the series of its current phase.",
			[]string{"namespace", "name", "phase"}, nil),
		now: time.Now,
		max: EnginePhaseMaxEngines,
		m:   map[engineKey]*engineState{},
	}
}

// observe records e and returns the duration of the rollout it completes,
// if this process saw that rollout begin.
func (g *engines) observe(e Engine) (time.Duration, bool) {
	if e.Name == "" || e.To == "" {
		return 0, false
	}
	k := engineKey{e.Namespace, e.Name}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.m[k]
	if e.Deleting {
		delete(g.m, k)
		return 0, false
	}
	if !ok {
		if len(g.m) >= g.max {
			return 0, false
		}
		s = &engineState{}
		g.m[k] = s
	}
	s.phase = e.To
	s.expires = now.Add(max(ExpiryPolls*e.TTL, MinExpiry))

	// The transition is read from the observed status to the one written:
	// a call Crossplane repeats because the write did not land repeats the
	// transition, so the start is kept, never moved, and the end is
	// counted once.
	switch {
	case (e.To == phaseCreating || e.To == phaseUpdating) && e.From != e.To:
		if s.creatingSince.IsZero() {
			s.creatingSince = now
		}
	case e.To == phaseStable && e.From != phaseStable:
		if s.creatingSince.IsZero() {
			return 0, false
		}
		took := now.Sub(s.creatingSince)
		s.creatingSince = time.Time{}
		return took, true
	case e.To == phaseStopped:
		// Stopped mid-rollout: the rollout never completes.
		s.creatingSince = time.Time{}
	}
	return 0, false
}

// Describe implements prometheus.Collector.
func (g *engines) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

// Collect implements prometheus.Collector.
func (g *engines) Collect(ch chan<- prometheus.Metric) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, s := range g.m {
		if now.After(s.expires) {
			delete(g.m, k)
			continue
		}
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, 1, k.namespace, k.name, s.phase)
	}
}
