package promcheck

import (
	"context"
	"testing"

	"github.com/crossplane/function-sdk-go/errors"
)

// TestLimiter shows a Limiter lets Size acquires through, refuses the next
// with its context's cause, and lets one through again after a release.
func TestLimiter(t *testing.T) {
	t.Parallel()
	l := NewLimiter(2)
	ctx := t.Context()
	for i := range l.Size() {
		if err := l.acquire(ctx); err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
	}
	full, cancel := context.WithCancelCause(ctx)
	stop := errors.New("gave up")
	cancel(stop)
	if err := l.acquire(full); !errors.Is(err, stop) {
		t.Errorf("acquire on a full Limiter = %v, want %v", err, stop)
	}
	l.release()
	if err := l.acquire(ctx); err != nil {
		t.Errorf("acquire after a release: %v", err)
	}
	// A free slot does not start what is already over.
	if err := NewLimiter(1).acquire(full); !errors.Is(err, stop) {
		t.Errorf("acquire with an ended context = %v, want %v", err, stop)
	}
}

// TestLimiterDefaults shows a Limiter of no size gets the default, and
// Clients built without WithLimiter share one, the process's.
func TestLimiterDefaults(t *testing.T) {
	t.Parallel()
	if got := NewLimiter(0).Size(); got != DefaultMaxConcurrentQueries {
		t.Errorf("NewLimiter(0).Size() = %d, want %d", got, DefaultMaxConcurrentQueries)
	}
	a, b := New(), New()
	if a.limiter != b.limiter || a.limiter.Size() != DefaultMaxConcurrentQueries {
		t.Errorf("two Clients without WithLimiter share no Limiter of %d slots", DefaultMaxConcurrentQueries)
	}
	if own := NewLimiter(3); New(WithLimiter(own)).limiter != own {
		t.Error("WithLimiter was not used")
	}
}
