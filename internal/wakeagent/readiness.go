package wakeagent

import (
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// Readiness is which engines have a ready endpoint, as the EndpointSlice
// informer reports it, and the waiters parked until an engine becomes
// ready. It does no I/O: the informer's event handlers feed it.
//
// An engine is ready when any endpoint of any of its slices is ready, so
// readiness is kept per slice and recomputed across the engine's slices on
// every event: a blue-green flip adds the new generation's slice before it
// removes the old one, and neither event alone says what the engine is.
type Readiness struct {
	mu sync.Mutex
	// synced is set once the informer's first list is in the cache; until
	// then "no ready endpoint" means "not known yet", not "stopped".
	synced bool
	// slices maps an engine to its slices (namespace/name) and whether each
	// has a ready endpoint.
	slices map[string]map[string]bool
	// engineOf maps a slice key to the engine it was last counted for, so
	// an update or delete finds the entry to change.
	engineOf map[string]string
	// waiters maps an engine that is not ready to the channel closed when
	// it becomes ready, and how many parked requests hold that channel. The
	// entry is dropped by the last one to leave, or when the channel is
	// closed, so it lives no longer than the requests waiting on it.
	waiters map[string]*waiter
}

type waiter struct {
	ch   chan struct{}
	refs int
}

// NewReadiness returns an empty, unsynced Readiness.
func NewReadiness() *Readiness {
	return &Readiness{
		slices:   map[string]map[string]bool{},
		engineOf: map[string]string{},
		waiters:  map[string]*waiter{},
	}
}

// sliceReady reports whether a slice has a ready endpoint. A nil ready
// condition means unknown, which consumers must treat as ready (as the
// EndpointSlice API documents).
func sliceReady(s *discoveryv1.EndpointSlice) bool {
	for i := range s.Endpoints {
		if r := s.Endpoints[i].Conditions.Ready; r == nil || *r {
			return true
		}
	}
	return false
}

// Upsert records a slice that was added or updated.
func (r *Readiness) Upsert(key string, s *discoveryv1.EndpointSlice) {
	engine := engineOfSlice(s)
	ready := sliceReady(s)
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.engineOf[key]; ok && old != engine {
		r.forget(key, old)
	}
	if engine == "" {
		return
	}
	if r.slices[engine] == nil {
		r.slices[engine] = map[string]bool{}
	}
	r.slices[engine][key] = ready
	r.engineOf[key] = engine
	if ready {
		r.wake(engine)
	}
}

// Delete records a slice that is gone.
func (r *Readiness) Delete(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if engine, ok := r.engineOf[key]; ok {
		r.forget(key, engine)
	}
}

// MarkSynced records that the informer's cache holds the first full list.
func (r *Readiness) MarkSynced() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.synced = true
}

// Synced reports whether the cache holds the first full list.
func (r *Readiness) Synced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.synced
}

// Ready reports whether engine has a ready endpoint now.
func (r *Readiness) Ready(engine string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready(engine)
}

// Watch reports whether engine is ready and, when it is not, returns a
// channel closed when it becomes ready. The check and the subscription are
// one step under the lock, so a slice turning ready in between is not
// missed. The caller must call release once it stops waiting; release is
// never nil and may be called more than once.
func (r *Readiness) Watch(engine string) (ready bool, became <-chan struct{}, release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready(engine) {
		return true, nil, func() {}
	}
	w := r.waiters[engine]
	if w == nil {
		w = &waiter{ch: make(chan struct{})}
		r.waiters[engine] = w
	}
	w.refs++
	var once sync.Once
	return false, w.ch, func() { once.Do(func() { r.leave(engine, w) }) }
}

// leave drops one reference to w. The map entry is removed only if it is
// still w: once w's channel is closed a later waiter may have made a new
// one for the same engine, which must stay.
func (r *Readiness) leave(engine string, w *waiter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w.refs--
	if w.refs <= 0 && r.waiters[engine] == w {
		delete(r.waiters, engine)
	}
}

func (r *Readiness) ready(engine string) bool {
	for _, ready := range r.slices[engine] {
		if ready {
			return true
		}
	}
	return false
}

// forget removes key from engine's slices. Removing a slice never makes an
// engine ready, so no waiter is woken.
func (r *Readiness) forget(key, engine string) {
	delete(r.engineOf, key)
	delete(r.slices[engine], key)
	if len(r.slices[engine]) == 0 {
		delete(r.slices, engine)
	}
}

// wake releases everything parked on engine, which is ready now.
func (r *Readiness) wake(engine string) {
	if w := r.waiters[engine]; w != nil {
		close(w.ch)
		delete(r.waiters, engine)
	}
}
