package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// inPlaceImage is the image the scenario updates its engine to.
const inPlaceImage = "ghcr.io/firebolt-db/firebolt-core:preview-rc-e2e"

// Issue 11, part 1, on the real control plane with a real Prometheus
// scraping the fake pods: an engine with rollout: phased takes a change of
// its pod template in place. Its one generation keeps serving; while the
// check's query returns no data no pod moves; once it returns data the
// pods move one at a time, highest ordinal first, and the engine settles
// on the same generation with every pod on the new image. Never does a
// second generation exist.
func TestEngineRolloutPhasedUpdatesInPlace(t *testing.T) {
	s := newScenario(t, "s-inplace")
	const promAddr = "127.0.0.1:19092"
	s.prometheusAndInstance(promAddr, "demo")

	name := "ip"
	eng := s.engine(name, "demo", "", 3)
	set(t, eng, "phased", "spec", "rollout")
	set(t, eng, "1s", "spec", "drainCheckInterval")
	quiet := fmt.Sprintf(`sum(firebolt_running_queries{namespace=%q, pod=~"%s-g${GENERATION}-[0-9]+"}) < 1`, s.ns, name)
	set(t, eng, map[string]any{
		"initialDelaySeconds": int64(2), "periodSeconds": int64(2), "successThreshold": int64(2),
		"query": map[string]any{"expr": quiet, "url": "http://" + promAddr},
	}, "spec", "analysis")
	s.apply(eng)
	first := s.waitStable(eng, -1)
	gen := first.Active
	sts := fmt.Sprintf("%s-g%d", name, gen)
	ok := strings.ReplaceAll(quiet, "${GENERATION}", fmt.Sprint(gen))
	s.waitQuery(promAddr, ok, true)

	// Every poll below also asserts the rollout's invariants: one
	// generation only, and never more than one pod away at a time.
	var violations []string
	watch := func(ctx context.Context) (map[string]string, *appsv1.StatefulSet, error) {
		g, err := s.listGenerations(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if len(g.StatefulSets) != 1 || g.StatefulSets[0] != gen || g.Selector != gen {
			violations = append(violations, "generations "+g.String())
		}
		revs, set, err := s.enginePodRevisions(ctx, sts)
		if err != nil {
			return nil, nil, err
		}
		if n := set.Status.Replicas - set.Status.AvailableReplicas; n > 1 {
			violations = append(violations, fmt.Sprintf("%d pods unavailable at once", n))
		}
		return revs, set, nil
	}
	waitRollout := func(what string, done func(engineState, phasedState, map[string]string, *appsv1.StatefulSet) bool) phasedState {
		t.Helper()
		var st phasedState
		s.wait(rolloutTimeout, what, func(ctx context.Context) (bool, string, error) {
			u, err := s.get(eng)
			if err != nil || u == nil {
				return false, fmt.Sprintf("claim: %v", err), nil
			}
			e := readEngine(u)
			st = readEnginePhased(u)
			revs, set, err := watch(ctx)
			if err != nil {
				return false, harness.SeenErr(err), nil
			}
			return done(e, st, revs, set), fmt.Sprintf("%s %s pods=%v update=%s", e, st, revs, set.Status.UpdateRevision), nil
		})
		return st
	}

	// Busy pods: the query returns no data, so no pod may be let go.
	parts := s.watchPartitions(sts)
	cp.Pods.Set(s.ns, sts+"-", harness.Behaviour{Mode: harness.Busy, Running: 1})
	s.waitQuery(promAddr, ok, false)
	containers, _, _ := unstructured.NestedSlice(eng.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = inPlaceImage
	set(t, eng, containers, "spec", "template", "spec", "containers")
	s.apply(eng)
	held := waitRollout("the in-place update held by failing checks", func(e engineState, st phasedState, _ map[string]string, _ *appsv1.StatefulSet) bool {
		return e.Phase == "updating" && st.Phase == "rolling" && st.Failed >= 2
	})
	revs, held0, err := s.enginePodRevisions(s.ctx, sts)
	s.must(err)
	if held.Partition != 3 || updatedPods(revs, held0) != 0 || *held0.Spec.UpdateStrategy.RollingUpdate.Partition != 3 {
		t.Fatalf("failing checks let pods go: %s, pods %v on update revision %s, partition %v", held, revs, held0.Status.UpdateRevision, held0.Spec.UpdateStrategy.RollingUpdate)
	}

	// Quiet pods: they drain and the checks pass; the pods go one by one.
	cp.Pods.Set(s.ns, sts+"-", harness.Behaviour{Mode: harness.Idle})
	done := waitRollout("every pod updated in place", func(e engineState, st phasedState, revs map[string]string, set *appsv1.StatefulSet) bool {
		return e.Phase == "stable" && e.EngineReady.Status == "True" && st.Phase == "updated" && len(revs) == 3 && updatedPods(revs, set) == 3
	})
	if done.EndTime == "" {
		t.Errorf("phasedRollout.rolloutEndTime not set once every pod was updated: %s", done)
	}
	final := readEngine(mustGet(s, eng))
	if final.Active != gen || final.Current != gen {
		t.Errorf("the update moved the engine off generation %d: %s", gen, final)
	}
	pods, err := cp.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: labelEngine + "=" + name})
	s.must(err)
	for _, p := range pods.Items {
		if p.Spec.Containers[0].Image != inPlaceImage {
			t.Errorf("pod %s runs %s, want %s", p.Name, p.Spec.Containers[0].Image, inPlaceImage)
		}
	}
	if len(violations) > 0 {
		t.Errorf("the in-place update broke its invariants: %s", strings.Join(slices.Compact(violations), "; "))
	}
	// One step per pod, highest ordinal first.
	s.checkOnePodAtATime(parts, "FireboltEngine", name)
	// The claim reports the update done only now.
	s.wait(time.Minute, "the claim's observedGeneration", func(context.Context) (bool, string, error) {
		u := mustGet(s, eng)
		og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return og == u.GetGeneration(), fmt.Sprintf("observedGeneration %d, generation %d", og, u.GetGeneration()), nil
	})

	// standardRollingUpdate: busy pods and failing checks hold nothing;
	// the StatefulSet controller rolls every pod, still in place.
	cp.Pods.Set(s.ns, sts+"-", harness.Behaviour{Mode: harness.Busy, Running: 1})
	s.waitQuery(promAddr, ok, false)
	set(t, eng, true, "spec", "standardRollingUpdate")
	containers[0].(map[string]any)["image"] = inPlaceImage + "-2"
	set(t, eng, containers, "spec", "template", "spec", "containers")
	s.apply(eng)
	waitRollout("a standard rolling update to finish in place with the checks failing", func(e engineState, st phasedState, revs map[string]string, set *appsv1.StatefulSet) bool {
		return e.Phase == "stable" && st.Phase == "suspended" && len(revs) == 3 && updatedPods(revs, set) == 3 &&
			set.Status.CurrentRevision == set.Status.UpdateRevision
	})
}

// readEnginePhased reads an engine's status.phasedRollout.
func readEnginePhased(u *unstructured.Unstructured) phasedState {
	st, _, _ := unstructured.NestedMap(u.Object, "status", "phasedRollout")
	return readPhased(&unstructured.Unstructured{Object: map[string]any{"status": st}})
}

// enginePodRevisions is podRevisions for an engine's StatefulSet.
func (s *scenario) enginePodRevisions(ctx context.Context, sts string) (map[string]string, *appsv1.StatefulSet, error) {
	return s.statefulSetPods(ctx, sts, labelEngine)
}

func mustGet(s *scenario, u *unstructured.Unstructured) *unstructured.Unstructured {
	s.t.Helper()
	out, err := s.get(u)
	s.must(err)
	if out == nil {
		s.t.Fatalf("%s %s is gone", u.GetKind(), u.GetName())
	}
	return out
}
