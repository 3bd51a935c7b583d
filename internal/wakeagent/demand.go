package wakeagent

import (
	"sync"
	"time"
)

const (
	// MaxTrackedEngines bounds the demand map, the engine label's values
	// and the stamp limiter. A gateway serves one instance's engines; 4096
	// is far above any real instance and small enough to keep in memory.
	MaxTrackedEngines = 4096
	// DemandRetention is how long an engine's demand is kept after its
	// last request, when nothing holds for it.
	DemandRetention = 10 * time.Minute
)

// Demand tracks, per engine, the last time a request found it without a
// ready endpoint and how many requests are held for it, and caps the holds
// of all engines together. It keeps the engine-labelled metrics in step
// with its map.
type Demand struct {
	mu       sync.Mutex
	engines  map[string]*demandEntry
	holds    int
	capacity int
	m        *Metrics
}

type demandEntry struct {
	last    time.Time
	pending int
}

// NewDemand returns a tracker holding at most capacity requests at once;
// capacity 0 sheds every request that would be held.
func NewDemand(capacity int, m *Metrics) *Demand {
	return &Demand{engines: map[string]*demandEntry{}, capacity: max(capacity, 0), m: m}
}

// Record notes a demand for engine at now. Past MaxTrackedEngines a new
// engine is not tracked: the drop is counted and Record returns false.
func (d *Demand) Record(engine string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.engines[engine]
	if e == nil {
		if len(d.engines) >= MaxTrackedEngines {
			d.m.demandDropped.Inc()
			return false
		}
		e = &demandEntry{}
		d.engines[engine] = e
		// Create the engine's series together, so pending holds and
		// sheds read 0 rather than absent while the engine is tracked.
		d.m.pendingHolds.WithLabelValues(engine)
		d.m.shed.WithLabelValues(engine)
	}
	if now.After(e.last) {
		e.last = now
		d.m.lastDemand.WithLabelValues(engine).Set(float64(now.Unix()))
	}
	return true
}

// Hold takes a hold slot for engine. When every slot is taken the request
// is shed: Hold counts it and returns false. Otherwise the caller must call
// release, once, when the request stops waiting.
func (d *Demand) Hold(engine string) (release func(), ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.engines[engine]
	if d.holds >= d.capacity {
		if e != nil {
			d.m.shed.WithLabelValues(engine).Inc()
		}
		return nil, false
	}
	d.holds++
	if e != nil {
		e.pending++
		d.m.pendingHolds.WithLabelValues(engine).Set(float64(e.pending))
	}
	var once sync.Once
	return func() { once.Do(func() { d.release(engine, e) }) }, true
}

// release frees a slot. e is the entry the hold was counted on, if any;
// an entry is never pruned while it has pending holds, so it is still the
// one in the map.
func (d *Demand) release(engine string, e *demandEntry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.holds--
	if e != nil {
		e.pending--
		d.m.pendingHolds.WithLabelValues(engine).Set(float64(e.pending))
	}
}

// Prune forgets engines whose last demand is DemandRetention old at now and
// that hold no request, with their metric series.
func (d *Demand) Prune(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for engine, e := range d.engines {
		if e.pending > 0 || now.Sub(e.last) < DemandRetention {
			continue
		}
		delete(d.engines, engine)
		d.m.pendingHolds.DeleteLabelValues(engine)
		d.m.shed.DeleteLabelValues(engine)
		d.m.lastDemand.DeleteLabelValues(engine)
	}
}

// Holds returns the number of requests held now, for all engines.
func (d *Demand) Holds() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.holds
}

// Last returns the last demand recorded for engine, if it is tracked.
func (d *Demand) Last(engine string) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.engines[engine]
	if !ok {
		return time.Time{}, false
	}
	return e.last, true
}
