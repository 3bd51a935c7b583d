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

// Steady tells whether engines are in steady state at now: no composite's
// breaker is open, and no status changed within quiet. A status change
// is followed by a few calls it causes itself (the composite's own write
// and the claim's status copy are watch events); a resting engine is then
// called only on its long stable TTL. The string says what is not steady.
func Steady(cs []Composite, now time.Time, quiet time.Duration) (bool, string) {
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
	if len(open) == 0 && len(recent) == 0 {
		return true, fmt.Sprintf("%d composites; last status change %s before", len(cs), now.Sub(last).Round(time.Second))
	}
	var parts []string
	if len(open) > 0 {
		parts = append(parts, fmt.Sprintf("%d with the circuit breaker open (%s)", len(open), few(open)))
	}
	if len(recent) > 0 {
		parts = append(parts, fmt.Sprintf("%d with a status change in the last %s (%s)", len(recent), quiet, few(recent)))
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
