package e2e

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 3: scaling 2 -> 3 rolls a new generation blue-green. The routing
// Service moves only once every new pod is Ready; the old generation stays
// while one of its pods reports a running query and goes once it reports 0;
// the engine ends stable; never more than two generations exist at once.
func TestScaleRollsBlueGreen(t *testing.T) {
	s := newScenario(t, "s3-scale")
	eng, st := s.stableEngine("demo", 2)
	old := st.Active
	xr := s.compositeName(eng)
	w := s.watchGenerations("demo")

	// One old pod has a query running; the other is idle.
	busy := fmt.Sprintf("demo-g%d-1", old)
	cp.Pods.Set(s.ns, busy, harness.Behaviour{Mode: harness.Busy, Running: 1})

	s.apply(withHold(t, s.engine("demo", "demo", "", 3)))
	st = s.waitEngine(eng, rolloutTimeout, "creating a new generation", func(e engineState) bool {
		return e.Phase == "creating" && e.Current > old
	})
	next := st.Current
	s.waitEngine(eng, rolloutTimeout, fmt.Sprintf("StatefulSet demo-g%d created", next), func(engineState) bool {
		_, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, fmt.Sprintf("demo-g%d", next), metav1.GetOptions{})
		return err == nil
	})

	// While the new pods are not Ready, traffic stays on the old generation.
	calls := s.functionCalls(xr)
	s.consistently(rolloutTimeout, "the routing Service on the old generation while the new pods are not Ready", func() (bool, string) {
		g := s.generations("demo")
		return g.Selector == old, g.String()
	}, func() bool { return s.functionCalls(xr) >= calls+3 })

	// Release the new pods one at a time: until the last is Ready, traffic
	// stays where it is.
	for i := range 3 {
		s.releasePod(fmt.Sprintf("demo-g%d-%d", next, i))
		if i == 2 {
			break
		}
		calls := s.functionCalls(xr)
		s.consistently(rolloutTimeout, fmt.Sprintf("the routing Service on the old generation with %d of 3 new pods Ready", i+1), func() (bool, string) {
			g := s.generations("demo")
			return g.Selector == old, g.String()
		}, func() bool { return s.functionCalls(xr) >= calls+2 })
	}
	s.waitSelector("demo", next)

	// Draining: the busy pod holds the old generation.
	st = s.waitEngine(eng, rolloutTimeout, "draining the old generation", func(e engineState) bool {
		return e.Phase == "draining" && e.Drain == old && e.Active == next
	})
	scrapes := cp.Pods.Scrapes(s.ns, busy)
	s.consistently(rolloutTimeout, "the old generation kept while a pod reports a running query", func() (bool, string) {
		g := s.generations("demo")
		return len(g.StatefulSets) == 2 && g.StatefulSets[0] == old, g.String()
	}, func() bool { return cp.Pods.Scrapes(s.ns, busy) >= scrapes+3 })

	cp.Pods.Set(s.ns, busy, harness.Behaviour{Mode: harness.Idle})
	st = s.waitStable(eng, old)
	if st.Active != next {
		t.Errorf("stable on generation %d, want %d", st.Active, next)
	}
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, fmt.Sprintf("demo-g%d", next), metav1.GetOptions{})
	s.must(err)
	if *sts.Spec.Replicas != 3 || sts.Status.ReadyReplicas != 3 {
		t.Errorf("StatefulSet %s: replicas %d, ready %d; want 3 and 3", sts.Name, *sts.Spec.Replicas, sts.Status.ReadyReplicas)
	}
	w.check(s)
}
