package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

const (
	// breakerPokes: annotation updates of a composite, two breaker tokens
	// each, well past the bucket of 100 Crossplane starts it with.
	breakerPokes = 80
	// breakerClosedTimeout bounds the wait for an open breaker to close at
	// rest: Crossplane keeps it open 5m, and the engine stamps
	// lastReconciled (the event that closes it) once its status has rested
	// 5m, at most twice (the class likewise); with margin for a busy machine.
	breakerClosedTimeout = 14 * time.Minute
)

// TestOpenBreakerClosesAtRest: once Crossplane's XR circuit breaker has
// opened for a resting engine or class, the composite is polled every 5 s
// (the only way an edit is noticed then). Crossplane closes the breaker only
// on an event arriving after its open duration, and a composite at rest
// causes none, so the function makes one: each breaker closes (Responsive
// True again) within minutes, not at Crossplane's hourly resync, and the 5 s
// poll ends. The class's breaker is opened in the field by many engines
// binding at once; here, like the engine's, by updates of its composite.
// The two wait in parallel.
func TestOpenBreakerClosesAtRest(t *testing.T) {
	s := newScenario(t, "s-breaker")
	eng, _ := s.stableEngine("demo", 1)
	class := s.example("engineclass.yaml", "standard")
	s.apply(class)
	engines, err := cp.Resource(harness.XEngineGVK, "")
	s.must(err)
	classes, err := cp.Resource(harness.XClassGVK, "")
	s.must(err)
	type breaker struct {
		ri   dynamic.ResourceInterface
		name string
	}
	breakers := []breaker{{engines, s.compositeName(eng)}, {classes, s.compositeName(class)}}
	for _, b := range breakers {
		for i := range breakerPokes {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.firebolt.io/poke":"%d"}}}`, i)
			_, err := b.ri.Patch(s.ctx, b.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			s.must(err)
		}
	}
	responsive := func(b breaker, want string) harness.Check {
		return func(ctx context.Context) (bool, string, error) {
			u, err := b.ri.Get(ctx, b.name, metav1.GetOptions{})
			if err != nil {
				return false, harness.SeenErr(err), nil
			}
			c := harness.Condition(u, "Responsive")
			return c.Status == want, c.String(), nil
		}
	}
	for _, b := range breakers {
		s.wait(time.Minute, "the breaker of "+b.name+" open (Responsive False)", responsive(b, "False"))
	}
	for _, b := range breakers {
		s.wait(breakerClosedTimeout, "the breaker of "+b.name+" closed again at rest (Responsive True)", responsive(b, "True"))
	}
}
