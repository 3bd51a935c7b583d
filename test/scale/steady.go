package scale

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// A Composite is what steady state is judged on for one engine composite.
type Composite struct {
	Name string
	// LastReconciled is the engine's status.lastReconciled: the function
	// moves it only when the status changes.
	LastReconciled time.Time
	// BreakerOpen: Crossplane's Responsive condition is False (reason
	// WatchCircuitOpen). The function then asks to be called every 5 s,
	// the only way a dropped event is noticed, so the engine is not idle.
	BreakerOpen bool
}

// Workload counts the engines' StatefulSets and pods in the measured
// namespace.
type Workload struct {
	// StatefulSets is how many engine StatefulSets exist, terminating or
	// not.
	StatefulSets int
	// Terminating is how many of those StatefulSets and of the engines'
	// pods are being deleted.
	Terminating int
}

// Steady tells whether engines are in steady state at now: no composite's
// breaker is open, no status changed within quiet, and Kubernetes has
// finished deleting the old generations (one StatefulSet per engine,
// nothing terminating). A status change is followed by a few calls it
// causes itself (the composite's own write and the claim's status copy
// are watch events); a resting engine is then called only on its long
// stable TTL. An old generation's StatefulSet is deleted in the
// foreground: until the garbage collector and the StatefulSet controller
// have removed its pods, their requests are not an idle engine's. The
// string says what is not steady.
func Steady(cs []Composite, w Workload, engines int, now time.Time, quiet time.Duration) (bool, string) {
	var open, recent []string
	var last time.Time
	for _, c := range cs {
		if c.BreakerOpen {
			open = append(open, c.Name)
		}
		if now.Sub(c.LastReconciled) < quiet {
			recent = append(recent, c.Name)
		}
		if c.LastReconciled.After(last) {
			last = c.LastReconciled
		}
	}
	settled := w.Terminating == 0 && w.StatefulSets == engines
	if len(open) == 0 && len(recent) == 0 && settled {
		return true, fmt.Sprintf("%d composites; last status change %s before; %d engine StatefulSets, none terminating",
			len(cs), now.Sub(last).Round(time.Second), w.StatefulSets)
	}
	var parts []string
	if len(open) > 0 {
		parts = append(parts, fmt.Sprintf("%d with the circuit breaker open (%s)", len(open), few(open)))
	}
	if len(recent) > 0 {
		parts = append(parts, fmt.Sprintf("%d with a status change in the last %s (%s)", len(recent), quiet, few(recent)))
	}
	if !settled {
		parts = append(parts, fmt.Sprintf("%d engine StatefulSets for %d engines, %d StatefulSets and pods terminating", w.StatefulSets, engines, w.Terminating))
	}
	return false, strings.Join(parts, "; ")
}

// few names at most three.
func few(names []string) string {
	sort.Strings(names)
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}
