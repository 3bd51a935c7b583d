package e2e

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 6: scaling to 0 parks the engine in phase stopped with
// EngineReady False, reason Stopped, and no pods; scaling back to 2 makes it
// stable again.
func TestScaleToZeroStopsAndBack(t *testing.T) {
	s := newScenario(t, "s6-stop")
	eng, _ := s.stableEngine("demo", 2)
	w := s.watchGenerations("demo")

	s.apply(s.engine("demo", "demo", "", 0))
	st := s.waitEngine(eng, rolloutTimeout, "stopped", func(e engineState) bool {
		return e.Phase == "stopped" && e.EngineReady.Status == "False" && e.EngineReady.Reason == "Stopped"
	})
	s.wait(rolloutTimeout, "no engine pods", func(ctx context.Context) (bool, string, error) {
		l, err := cp.Kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: labelEngine + "=demo"})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		return len(l.Items) == 0, fmt.Sprintf("%d pods", len(l.Items)), nil
	})
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, fmt.Sprintf("demo-g%d", st.Active), metav1.GetOptions{})
	s.must(err)
	if *sts.Spec.Replicas != 0 {
		t.Errorf("stopped engine's StatefulSet %s has %d replicas, want 0", sts.Name, *sts.Spec.Replicas)
	}

	s.apply(s.engine("demo", "demo", "", 2))
	s.waitStable(eng, st.Active)
	w.check(s)
}
