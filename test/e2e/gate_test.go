package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 8: an engine waits with InstanceNotReady while its instance is
// missing and while it exists but is not ready, composes nothing meanwhile,
// and proceeds once the instance is ready.
func TestEngineWaitsForInstance(t *testing.T) {
	s := newScenario(t, "s8-gate")
	eng := s.engine("demo", "demo", "", 2)
	s.apply(eng)
	xr := s.compositeName(eng)

	notReady := func(why string) {
		s.t.Helper()
		s.waitEngine(eng, rolloutTimeout, "InstanceNotReady ("+why+")", func(e engineState) bool {
			return e.EngineReady.Reason == "InstanceNotReady" && strings.Contains(e.EngineReady.Message, why)
		})
		calls := s.functionCalls(xr)
		s.consistently(rolloutTimeout, "no engine objects while the instance is not ready ("+why+")", func() (bool, string) {
			g := s.generations("demo")
			u, err := s.get(eng)
			switch {
			case err != nil:
				return true, fmt.Sprintf("no observation, the claim could not be read: %v", err)
			case u == nil:
				return false, "the claim is gone"
			}
			e := readEngine(u)
			if !settled(e) {
				return len(g.StatefulSets) == 0, e.String() + " " + g.String()
			}
			return len(g.StatefulSets) == 0 && e.EngineReady.Reason == "InstanceNotReady" && e.Ready.Status != "True", e.String() + " " + g.String()
		}, func() bool { return s.functionCalls(xr) >= calls+3 })
	}
	notReady("not found")

	// The instance exists, but its metadata service is not ready.
	inst := s.instance("demo")
	set(t, inst, map[string]any{harness.HoldLabel: "true"}, "spec", "metadata", "template", "metadata", "labels")
	s.apply(inst)
	notReady("metadata")

	s.releasePods("firebolt.io/component=metadata", 1)
	s.waitInstanceReady(inst)
	st := s.waitStable(eng, -1)
	if st.EngineReady.Reason != "EngineReady" {
		t.Errorf("after the instance became ready: %s, want EngineReady reason EngineReady", st)
	}
	s.waitEngine(eng, rolloutTimeout, "InstanceReady True", func(engineState) bool {
		u, err := s.get(eng)
		return err == nil && u != nil && harness.Condition(u, "InstanceReady").Status == "True"
	})
}
