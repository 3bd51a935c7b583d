package wakeagent

import (
	"sync"
	"time"
)

// Limiter allows one stamp per engine per interval. The function treats a
// stamp as demand for WakeTTL (5 min), so restamping every few seconds
// keeps a held engine's demand fresh while sparing the API server one
// patch per request.
type Limiter struct {
	mu       sync.Mutex
	interval time.Duration
	max      int
	last     map[string]time.Time
}

// NewLimiter returns a limiter remembering at most maxEntries engines.
func NewLimiter(interval time.Duration, maxEntries int) *Limiter {
	return &Limiter{interval: interval, max: maxEntries, last: map[string]time.Time{}}
}

// Allow reports whether engine may be stamped at now, and if so counts the
// stamp from now. When the limiter is full of engines stamped within the
// interval it allows without remembering: a lost wake costs a cold engine,
// an extra patch costs little, and only more than maxEntries distinct
// engines woken within one interval get there.
func (l *Limiter) Allow(engine string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at, ok := l.last[engine]; ok && now.Sub(at) < l.interval && !now.Before(at) {
		return false
	}
	if _, ok := l.last[engine]; !ok && len(l.last) >= l.max {
		l.expire(now)
		if len(l.last) >= l.max {
			return true
		}
	}
	l.last[engine] = now
	return true
}

// expire forgets the engines whose interval is over at now: they would be
// allowed anyway.
func (l *Limiter) expire(now time.Time) {
	for engine, at := range l.last {
		if now.Sub(at) >= l.interval {
			delete(l.last, engine)
		}
	}
}
