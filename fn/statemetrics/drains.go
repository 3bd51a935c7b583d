package statemetrics

import (
	"sync"
	"time"
)

// drainGrace is how long a count is kept for an engine the cache does not
// hold: a check can run on a call that raced the engine's creation (the
// watch event not in yet) or its deletion (the delete event already in).
const drainGrace = 5 * time.Minute

type drainCount struct {
	n    uint64
	last time.Time
}

// drainCounts counts failed drain checks per engine. It holds at most max
// engines: the cache bounds the engines with series to the same number.
type drainCounts struct {
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[claim]*drainCount
}

func newDrainCounts(limit int, now func() time.Time) *drainCounts {
	return &drainCounts{max: limit, now: now, m: map[claim]*drainCount{}}
}

func (d *drainCounts) inc(c claim) {
	if !c.known() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n, ok := d.m[c]
	if !ok {
		if len(d.m) >= d.max {
			return
		}
		n = &drainCount{}
		d.m[c] = n
	}
	n.n++
	n.last = d.now()
}

func (d *drainCounts) count(c claim) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n, ok := d.m[c]; ok {
		return n.n
	}
	return 0
}

// forget drops an engine's count: the engine is gone.
func (d *drainCounts) forget(c claim) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.m, c)
}

// prune drops the counts of engines not live whose last failure is older
// than drainGrace.
func (d *drainCounts) prune(live map[claim]bool) {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for c, n := range d.m {
		if !live[c] && now.Sub(n.last) > drainGrace {
			delete(d.m, c)
		}
	}
}
