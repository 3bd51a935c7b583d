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
)

// WatchesDropped tells whether Crossplane's circuit breaker for the
// composite xr is open.
func WatchesDropped(xr map[string]any) bool {
	c := ConditionOf(xr, TypeResponsive)
	return c != nil && c.Status == metav1.ConditionFalse
}
