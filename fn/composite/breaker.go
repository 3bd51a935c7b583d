package composite

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Crossplane's XR circuit breaker drops the watch events of a composite
// that reconciles too often (core flags: burst 100, refill 1/s) and marks
// it with its own condition Responsive False, reason WatchCircuitOpen,
// before it calls the function. While it is open an edit of the claim,
// which reaches the composite as a watch event, is noticed only by a timed
// call; timed calls do not count against the breaker.
const (
	// TypeResponsive is Crossplane's condition on a composite.
	TypeResponsive = "Responsive"
	// TTLWatchesDropped caps a composer's TTL while the breaker is open.
	TTLWatchesDropped = 5 * time.Second
	// BreakerReprobe: while the breaker stays open, a composite's
	// status.lastReconciled is stamped again once it is this old.
	// Crossplane v2.4 closes an open breaker only when an event for the
	// composite arrives after its open duration (5m by default), and a
	// composite at rest causes none: without the stamp it would keep the
	// 5 s poll of TTLWatchesDropped until something else changed. The
	// stamp's own status write is that event; made no sooner than 5m after
	// the status last changed, one or two of them close the breaker at the
	// default open duration, and at a longer one it costs one write per 5m.
	BreakerReprobe = 5 * time.Minute
)

// WatchesDropped tells whether Crossplane's circuit breaker for the
// composite xr is open.
func WatchesDropped(xr map[string]any) bool {
	c := ConditionOf(xr, TypeResponsive)
	return c != nil && c.Status == metav1.ConditionFalse
}

// LastReconciled is a composite's status.lastReconciled after a call at
// now, given the one it carries (last) and whether the rest of its status
// changed. It moves only when the status changes (or has never been
// stamped) and on a breaker reprobe: a stamp on every call would be a
// status write on every call, and every write of the composite is a watch
// event that makes Crossplane reconcile it again.
func LastReconciled(last *metav1.Time, changed, watchesDropped bool, now time.Time) *metav1.Time {
	if last == nil || changed || (watchesDropped && now.Sub(last.Time) >= BreakerReprobe) {
		t := metav1.NewTime(now.UTC().Truncate(time.Second))
		return &t
	}
	return last
}
