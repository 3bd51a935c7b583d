package e2e

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scenario 5: a spec change while a generation is still being created
// abandons that half-built generation (its objects are deleted) and the
// engine ends on the newest spec, with never more than two generations.
func TestSpecChangeDuringCreatingAbandons(t *testing.T) {
	s := newScenario(t, "s5-abandon")
	eng, st := s.stableEngine("demo", 2)
	old := st.Active
	w := s.watchGenerations("demo")

	s.apply(withHold(t, s.engine("demo", "demo", "", 3)))
	st = s.waitEngine(eng, rolloutTimeout, "creating a held generation", func(e engineState) bool {
		if e.Phase != "creating" || e.Current <= old {
			return false
		}
		_, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, fmt.Sprintf("demo-g%d", e.Current), metav1.GetOptions{})
		return err == nil
	})
	abandoned := st.Current

	// The newest spec: four replicas, pods not held.
	s.apply(s.engine("demo", "demo", "", 4))
	st = s.waitStable(eng, abandoned)
	g := s.generations("demo")
	if g.Selector != st.Active || len(g.StatefulSets) != 1 {
		t.Errorf("after the rollout: %s, want only generation %d", g, st.Active)
	}
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, fmt.Sprintf("demo-g%d", st.Active), metav1.GetOptions{})
	s.must(err)
	if *sts.Spec.Replicas != 4 {
		t.Errorf("StatefulSet %s has %d replicas, want the newest spec's 4", sts.Name, *sts.Spec.Replicas)
	}
	if pods := s.pods("demo", abandoned); len(pods) != 0 {
		t.Errorf("%d pod(s) of the abandoned generation %d remain", len(pods), abandoned)
	}
	w.check(s)
}
