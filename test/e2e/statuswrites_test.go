package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// statusQuiet is how long a composite that reads stable and Ready must go
// without a write before a rollout counts as over: several times what a
// reconcile of an idle engine takes here.
const statusQuiet = 5 * time.Second

// TestCompositeStatusNeverGoesBack: every write of an engine composite's
// status, watched through five rollouts, says something at least as new
// as the writes before it. Crossplane v2.4 writes the status twice per
// reconcile (the desired status with the conditions as it read them, then
// the new conditions), and the next reconcile usually reads its cache
// before the second write reached it; without the function's
// resourceVersion precondition (fn/composite statusPrecondition) it
// applied the older conditions back, so the composite, and its claim, read
// not Ready again after the rollout had ended, often more than once. Here
// no write may carry a Synced observedGeneration below one already
// written, and once a rollout's composite has read EngineReady True at
// stable, no later write before the next edit may read otherwise.
func TestCompositeStatusNeverGoesBack(t *testing.T) {
	s := newScenario(t, "s-status")
	eng, st := s.stableEngine("demo", 1)
	xr := s.compositeName(eng)
	ri, err := cp.Resource(harness.XEngineGVK, "")
	s.must(err)

	for replicas := int64(2); replicas <= 6; replicas++ {
		cur, err := ri.Get(s.ctx, xr, metav1.GetOptions{})
		s.must(err)
		// A watch the API server ends is resumed from the last write read.
		lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = "metadata.name=" + xr
			return ri.Watch(ctx, o)
		}}
		w, err := watchtools.NewRetryWatcherWithContext(s.ctx, cur.GetResourceVersion(), lw)
		s.must(err)
		s.apply(s.engine("demo", "demo", "", replicas))
		writes, err := watchRollout(w, rolloutTimeout)
		w.Stop()
		if err != nil {
			t.Fatalf("rollout to %d replicas: %v\nwrites:\n%s", replicas, err, strings.Join(writes, "\n"))
		}
		t.Logf("rollout to %d replicas: %d composite writes, none going back", replicas, len(writes))
		st = s.waitStable(eng, st.Active)
	}
}

// watchRollout reads the composite's writes from w until it has left
// stable, come back to stable with EngineReady True, and then written
// nothing for statusQuiet, failing at the first write that goes back; it
// returns the writes it read, one line each.
func watchRollout(w watch.Interface, timeout time.Duration) ([]string, error) {
	var (
		writes           []string
		synced           int64
		rolling, settled bool
	)
	deadline := time.After(timeout)
	quiet := time.NewTimer(timeout)
	defer quiet.Stop()
	for {
		select {
		case <-deadline:
			return writes, fmt.Errorf("not settled after %s", timeout)
		case <-quiet.C:
			if settled {
				return writes, nil
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return writes, fmt.Errorf("the watch ended")
			}
			u, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				return writes, fmt.Errorf("watch event %s: %v", ev.Type, ev.Object)
			}
			cw := statusWrite(u)
			writes = append(writes, cw.String())
			if cw.synced < synced {
				return writes, fmt.Errorf("resourceVersion %s: Synced observedGeneration %d after %d", u.GetResourceVersion(), cw.synced, synced)
			}
			synced = max(synced, cw.synced)
			if settled && !cw.ready() {
				return writes, fmt.Errorf("resourceVersion %s: %s after the composite read stable and EngineReady True", u.GetResourceVersion(), cw)
			}
			rolling = rolling || cw.phase != "stable"
			settled = settled || rolling && cw.ready()
			quiet.Reset(statusQuiet)
		}
	}
}

// compositeWrite is what one write of an engine composite's status says.
type compositeWrite struct {
	rv, phase, engineReady string
	generation, synced     int64
}

func statusWrite(u *unstructured.Unstructured) compositeWrite {
	w := compositeWrite{rv: u.GetResourceVersion(), generation: u.GetGeneration()}
	w.phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		switch m["type"] {
		case "EngineReady":
			w.engineReady = fmt.Sprintf("%v/%v", m["status"], m["reason"])
		case "Synced":
			w.synced, _ = m["observedGeneration"].(int64)
		}
	}
	return w
}

func (w compositeWrite) ready() bool {
	return w.phase == "stable" && strings.HasPrefix(w.engineReady, "True/")
}

func (w compositeWrite) String() string {
	return fmt.Sprintf("rv %s generation %d: phase %s, EngineReady %s, Synced observedGeneration %d", w.rv, w.generation, w.phase, w.engineReady, w.synced)
}
