package e2e

import (
	"strings"
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Scenario: the limits are enforced by the API server Crossplane serves
// the claims from (the CEL rules on metadata.name reach the claim's CRD
// through the XRD), and an engine and instance at the longest names roll
// out, pods and all.
func TestClaimLimitsAtAdmission(t *testing.T) {
	s := newScenario(t, "s-limits")
	longestInstance := strings.Repeat("i", v1alpha1.MaxInstanceNameLength)
	longestEngine := strings.Repeat("e", v1alpha1.MaxEngineNameLength)

	for _, c := range []struct {
		what, name, kind string
		replicas         int64
		want             string
	}{
		{"an engine name one character too long", longestEngine + "e", "engine", 1, "a FireboltEngine name may be at most 47 characters"},
		{"an engine name that is no DNS-1035 label", "1st", "engine", 1, "a FireboltEngine name must be a DNS-1035 label"},
		{"replicas above the maximum", "demo", "engine", v1alpha1.MaxEngineReplicas + 1, "spec.replicas in body should be less than or equal to 1000"},
		{"an instance name one character too long", longestInstance + "i", "instance", 0, "a FireboltInstance name may be at most 40 characters"},
	} {
		u := s.instance(c.name)
		if c.kind == "engine" {
			u = s.engine(c.name, longestInstance, "", c.replicas)
		}
		_, err := cp.Apply(s.ctx, u)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want a refusal saying %q, got %v", c.what, c.want, err)
		}
	}

	inst := s.instance(longestInstance)
	s.apply(inst)
	s.waitInstanceReady(inst)
	eng := s.engine(longestEngine, longestInstance, "", 2)
	s.apply(eng)
	st := s.waitStable(eng, -1)
	if st.EngineReady.Reason != "EngineReady" {
		t.Errorf("engine of the longest name: %s, want EngineReady", st)
	}
	// The rules are checked on create only: an update is not refused.
	set(t, eng, int64(3), "spec", "replicas")
	s.apply(eng)
}
