package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

const (
	// breakerPokes: annotation updates of a composite, two breaker tokens
	// each, well past the bucket of 100 Crossplane starts it with.
	breakerPokes = 80
	// breakerClosedTimeout bounds the wait for an open breaker to close at
	// rest: Crossplane keeps it open 5m, and the engine stamps
	// lastReconciled (the event that closes it) once its status has rested
	// 5m, at most twice; with margin for a busy machine.
	breakerClosedTimeout = 14 * time.Minute
)

// TestOpenBreakerClosesAtRest: once Crossplane's XR circuit breaker has
// opened for a resting engine, the engine is polled every 5 s (the only way
// an edit is noticed then). Crossplane closes the breaker only on an event
// arriving after its open duration, and a resting engine causes none, so
// the engine itself makes one: the breaker closes (Responsive True again)
// within minutes, not at Crossplane's hourly resync, and the 5 s poll ends.
func TestOpenBreakerClosesAtRest(t *testing.T) {
	s := newScenario(t, "s-breaker")
	eng, _ := s.stableEngine("demo", 1)
	xr := s.compositeName(eng)
	ri, err := cp.Resource(harness.XEngineGVK, "")
	s.must(err)
	for i := range breakerPokes {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.firebolt.io/poke":"%d"}}}`, i)
		_, err := ri.Patch(s.ctx, xr, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		s.must(err)
	}
	responsive := func(want string) harness.Check {
		return func(ctx context.Context) (bool, string, error) {
			u, err := ri.Get(ctx, xr, metav1.GetOptions{})
			if err != nil {
				return false, harness.SeenErr(err), nil
			}
			c := harness.Condition(u, "Responsive")
			return c.Status == want, c.String(), nil
		}
	}
	s.wait(time.Minute, "the breaker of "+xr+" open (Responsive False)", responsive("False"))
	s.wait(breakerClosedTimeout, "the breaker of "+xr+" closed again at rest (Responsive True)", responsive("True"))
}
