package scrape

import (
	"context"
	"sync"
)

// A Limiter bounds the scrapes in flight across every Client that shares
// it. One function process serves every tenant: without a shared bound, 500
// engines draining at once would open 500 × Concurrency connections (and
// hold as many bodies in memory). It is safe for concurrent use.
//
// The bound is not fixed at construction: each scrape brings the
// MaxConcurrentScrapes of its own call, since the function input, which sets
// it, belongs to a Composition, and Compositions may differ. A scrape starts
// only while fewer than its own bound are in flight, so the count never
// exceeds the largest bound in use.
type Limiter struct {
	mu       sync.Mutex
	inFlight int
	// freed is closed, and replaced, whenever a slot is released, waking
	// every waiter to try again.
	freed chan struct{}
}

// NewLimiter returns a Limiter with nothing in flight.
func NewLimiter() *Limiter {
	return &Limiter{freed: make(chan struct{})}
}

// acquire takes a slot once fewer than limit scrapes are in flight, or
// returns the cause of ctx's end if that comes first. Every successful
// acquire must be paired with one release.
func (l *Limiter) acquire(ctx context.Context, limit int) error {
	for {
		l.mu.Lock()
		if l.inFlight < limit {
			l.inFlight++
			l.mu.Unlock()
			return nil
		}
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

func (l *Limiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	close(l.freed)
	l.freed = make(chan struct{})
}
