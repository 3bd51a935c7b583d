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

// Breaker is what a composite's Responsive condition says of Crossplane's
// circuit breaker for it.
type Breaker struct {
	Open bool
	// OpenedAt is when Crossplane marked the breaker open (the condition's
	// lastTransitionTime); zero when it is closed or the time is not
	// readable. Crossplane opens the breaker at or before that moment.
	OpenedAt time.Time
}

// BreakerOf reads xr's Responsive condition; of two with that type the
// first counts, as in Conditions. Its time is untrusted: a time in the
// future only delays the reprobe it schedules, never adds one.
func BreakerOf(xr map[string]any) Breaker {
	st, _ := xr["status"].(map[string]any)
	cs, _ := st["conditions"].([]any)
	for _, c := range cs {
		raw, ok := c.(map[string]any)
		if !ok || raw["type"] != TypeResponsive {
			continue
		}
		if raw["status"] != string(metav1.ConditionFalse) {
			return Breaker{}
		}
		b := Breaker{Open: true}
		if s, ok := raw["lastTransitionTime"].(string); ok {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				b.OpenedAt = t
			}
		}
		return b
	}
	return Breaker{}
}

// LastReconciled is a composite's status.lastReconciled after a call at
// now, given the one it carries (last), whether the rest of its status
// changed, and its breaker. It moves only when the status changes (or has
// never been stamped) and on a breaker reprobe: a stamp on every call
// would be a status write on every call, and every write of the composite
// is a watch event that makes Crossplane reconcile it again.
//
// A reprobe is made once the breaker has been open for its default open
// duration (a second more, as the condition's time is truncated to
// seconds), unless one was made since, and every BreakerReprobe while the
// status rests, for longer open durations. Counting only from the last
// status change, a stamp made a second before the open duration ended
// did not close the breaker, and the composite kept its 5 s poll for
// another 5 minutes (seen at N = 25: one engine, 5.1 idle requests per
// engine per minute).
func LastReconciled(last *metav1.Time, changed bool, b Breaker, now time.Time) *metav1.Time {
	stamp := last == nil || changed
	if !stamp && b.Open {
		stamp = now.Sub(last.Time) >= BreakerReprobe
		if reprobeAt := b.OpenedAt.Add(BreakerReprobe + time.Second); !b.OpenedAt.IsZero() && !now.Before(reprobeAt) && last.Time.Before(reprobeAt) {
			stamp = true
		}
	}
	if stamp {
		t := metav1.NewTime(now.UTC().Truncate(time.Second))
		return &t
	}
	return last
}
