package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 4: a drain check that cannot read the old pods' metrics (the
// server answers 500, is down, or hangs) keeps the old generation and says
// DrainCheckFailing; once the metrics read 0 the rollout finishes.
// rollout: recreate deletes the old generation without waiting, even while
// its pods report running queries.
func TestDrainCheckFailingHoldsOldGeneration(t *testing.T) {
	s := newScenario(t, "s4-drain")
	eng, st := s.stableEngine("demo", 2)
	old := st.Active
	xr := s.compositeName(eng)
	w := s.watchGenerations("demo")
	prefix := podPrefix("demo", old)
	cp.Pods.Set(s.ns, prefix, harness.Behaviour{Mode: harness.Failing})

	s.apply(s.engine("demo", "demo", "", 3))
	s.waitEngine(eng, rolloutTimeout, "draining with DrainCheckFailing", func(e engineState) bool {
		return e.Phase == "draining" && e.Drain == old && e.EngineReady.Reason == "DrainCheckFailing"
	})

	for _, b := range []harness.Behaviour{{Mode: harness.Failing}, {Mode: harness.Down}, {Mode: harness.Hanging}} {
		cp.Pods.Set(s.ns, prefix, b)
		calls := s.functionCalls(xr)
		var last engineState
		s.consistently(rolloutTimeout, fmt.Sprintf("the old generation kept, draining and not ready, while its metrics are %s", b.Mode), func() (bool, string) {
			u, err := s.get(eng)
			switch {
			case err != nil:
				return true, fmt.Sprintf("no observation, the claim could not be read: %v", err)
			case u == nil:
				return false, "the claim is gone"
			}
			e := readEngine(u)
			g := s.generations("demo")
			if !settled(e) {
				return true, e.String()
			}
			last = e
			ok := e.Phase == "draining" && e.EngineReady.Status != "True" && len(g.StatefulSets) == 2 && g.StatefulSets[0] == old
			return ok, e.String() + " " + g.String()
		}, func() bool {
			return s.functionCalls(xr) >= calls+3 && last.EngineReady.Reason == "DrainCheckFailing"
		})
		if msg := last.EngineReady.Message; !strings.Contains(msg, fmt.Sprint(old)) {
			t.Errorf("metrics %s: DrainCheckFailing message %q does not name generation %d", b.Mode, msg, old)
		}
	}

	cp.Pods.Set(s.ns, prefix, harness.Behaviour{Mode: harness.Idle})
	st = s.waitStable(eng, old)
	w.check(s)

	// rollout: recreate. The active pods report running queries; the old
	// generation goes anyway, and is never scraped.
	old = st.Active
	prefix = podPrefix("demo", old)
	cp.Pods.Set(s.ns, prefix, harness.Behaviour{Mode: harness.Busy, Running: 5, Suspended: 1})
	scrapes := cp.Pods.ScrapesWithPrefix(s.ns, prefix)
	recreate := s.engine("demo", "demo", "", 2)
	set(t, recreate, "recreate", "spec", "rollout")
	s.apply(recreate)
	s.waitStable(eng, old)
	if n := cp.Pods.ScrapesWithPrefix(s.ns, prefix) - scrapes; n != 0 {
		t.Errorf("rollout: recreate scraped the old generation's pods %d time(s), want 0", n)
	}
	w.check(s)
}
