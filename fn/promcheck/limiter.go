package promcheck

import "context"

// A Limiter bounds the queries in flight across every Client that shares
// it. One function process checks the rollouts of every tenant: without a
// shared bound, a slow Prometheus would pile up one connection and one body
// per rollout. It is safe for concurrent use.
type Limiter struct {
	slots chan struct{}
}

// NewLimiter returns a Limiter of n slots; n below 1 means
// DefaultMaxConcurrentQueries.
func NewLimiter(n int) *Limiter {
	if n < 1 {
		n = DefaultMaxConcurrentQueries
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// processLimiter is the Limiter of every Client built without WithLimiter,
// so the bound holds for the whole process by default.
var processLimiter = NewLimiter(DefaultMaxConcurrentQueries)

// Size is how many queries the Limiter lets run at once.
func (l *Limiter) Size() int { return cap(l.slots) }

// acquire takes a slot, or returns ctx's cause if ctx ends first. Every
// successful acquire must be paired with one release.
func (l *Limiter) acquire(ctx context.Context) error {
	// A query whose time is already up must not start just because a slot
	// happens to be free: select picks at random among ready cases.
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (l *Limiter) release() { <-l.slots }
