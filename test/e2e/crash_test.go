package e2e

import (
	"context"
	"fmt"
	"testing"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// holdFinalizer keeps an old pod, and so its StatefulSet's foreground
// deletion, from completing: the test holds a rollout in cleaning with it.
const holdFinalizer = "e2e.firebolt.io/hold-deletion"

// Scenario 9: the function and Crossplane are killed (SIGKILL) at four
// points of a rollout and started again: right after the status intent,
// while the new generation is being created, right after the routing
// Service moved, and while the old generation is being deleted. Each round
// kills the other process at each point. While the old generation's pods
// report queries it survives every crash; the engine then converges on the
// new generation with nothing of the old one left and nothing lost. It runs
// alone: the processes it kills serve every scenario.
func TestCrashRecovery(t *testing.T) {
	s := newSoloScenario(t, "s9-crash")
	eng, st := s.stableEngine("demo", 2)
	xr := s.compositeName(eng)
	w := s.watchGenerations("demo")
	rounds := [][4]string{
		{"function", "crossplane", "function", "crossplane"},
		{"crossplane", "function", "crossplane", "function"},
	}
	replicas := int64(2)
	for round, kill := range rounds {
		old := st.Active
		replicas = 5 - replicas // 3, then 2
		oldPods := podPrefix("demo", old)
		cp.Pods.Set(s.ns, oldPods, harness.Behaviour{Mode: harness.Busy, Running: 1})
		finalized := oldPods + "0"
		s.patchPod(finalized, fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, holdFinalizer))

		s.apply(withHold(t, s.engine("demo", "demo", "", replicas)))
		st = s.waitEngine(eng, rolloutTimeout, fmt.Sprintf("round %d: the status intent", round), func(e engineState) bool {
			return e.Phase == "creating" && e.Current > old
		})
		next := st.Current
		s.crash(kill[0], "after the status intent")
		s.busyKept(xr, old, "after the status intent")

		s.waitEngine(eng, rolloutTimeout, fmt.Sprintf("round %d: StatefulSet demo-g%d created", round, next), func(engineState) bool {
			_, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, fmt.Sprintf("demo-g%d", next), metav1.GetOptions{})
			return err == nil
		})
		s.crash(kill[1], "mid-creating")
		s.busyKept(xr, old, "mid-creating")
		s.release("demo", next, int(replicas))

		s.waitSelector("demo", next)
		s.crash(kill[2], "right after the selector flip")
		s.busyKept(xr, old, "right after the selector flip")

		cp.Pods.Set(s.ns, oldPods, harness.Behaviour{Mode: harness.Idle})
		s.wait(rolloutTimeout, fmt.Sprintf("round %d: StatefulSet demo-g%d being deleted", round, old), func(ctx context.Context) (bool, string, error) {
			sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(ctx, fmt.Sprintf("demo-g%d", old), metav1.GetOptions{})
			if err != nil {
				return false, harness.SeenErr(err), nil
			}
			return sts.DeletionTimestamp != nil, "not deleting yet", nil
		})
		s.crash(kill[3], "mid-cleaning")
		s.patchPod(finalized, `{"metadata":{"finalizers":null}}`)

		st = s.waitStable(eng, old)
		if st.Active != next || st.Current != next || st.Drain != 0 && st.Drain != -1 {
			t.Errorf("round %d: converged to %s, want active and current generation %d and nothing draining", round, st, next)
		}
		g := s.generations("demo")
		want := fmt.Sprintf("[sts gens [%d], headless svc gens [%d], configmap gens [%d], routing selector %d]", next, next, next, next)
		if g.String() != want {
			t.Errorf("round %d: objects %s, want %s", round, g, want)
		}
		if n := len(s.pods("demo", next)); int64(n) != replicas {
			t.Errorf("round %d: %d pod(s) of generation %d, want %d", round, n, next, replicas)
		}
		if n := len(s.pods("demo", old)); n != 0 {
			t.Errorf("round %d: %d pod(s) of the old generation %d left", round, n, old)
		}
	}
	w.check(s)
}

// busyKept observes, over three function calls for composite xr, that
// generation old, whose pods report queries, is neither deleted nor being
// deleted.
func (s *scenario) busyKept(xr string, old int64, when string) {
	s.t.Helper()
	calls := s.functionCalls(xr)
	name := fmt.Sprintf("demo-g%d", old)
	s.consistently(rolloutTimeout, fmt.Sprintf("the busy generation %d kept %s", old, when), func() (bool, string) {
		sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		switch {
		case kerrors.IsNotFound(err):
			return false, "StatefulSet " + name + " deleted"
		case err != nil:
			return true, err.Error() // the API server is busy: no observation
		case sts.DeletionTimestamp != nil:
			return false, "StatefulSet " + name + " being deleted"
		}
		return true, "StatefulSet " + name + " kept"
	}, func() bool { return s.functionCalls(xr) >= calls+3 })
}

// crash kills a process the way a node failure would and starts it again.
func (s *scenario) crash(process, when string) {
	s.t.Helper()
	s.t.Logf("killing %s %s", process, when)
	cp.Process(process).Kill()
	switch process {
	case "crossplane":
		s.must(cp.RestartCrossplane(s.ctx))
	case "function":
		s.must(cp.RestartFunction(s.ctx))
	default:
		s.t.Fatalf("cannot crash %q", process)
	}
}

func (s *scenario) patchPod(name, patch string) {
	s.t.Helper()
	s.wait(rolloutTimeout, "patching pod "+name, func(ctx context.Context) (bool, string, error) {
		_, err := cp.Kube.CoreV1().Pods(s.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		return true, "", nil
	})
}
