package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 2: the example instance, class and engine, applied as a user
// would, end with the engine stable and EngineReady; the claim mirrors the
// composite; `kubectl get fireng` shows sensible columns.
func TestEngineCreate(t *testing.T) {
	s := newScenario(t, "s2-engine")
	inst := s.instance("demo")
	s.apply(inst)
	s.apply(s.example("engineclass.yaml", "standard"))
	eng := s.example("engine.yaml", "demo")
	s.apply(eng)
	s.waitInstanceReady(inst)

	st := s.waitStable(eng, -1)
	if st.EngineReady.Reason != "EngineReady" {
		t.Errorf("EngineReady reason = %q, want EngineReady", st.EngineReady.Reason)
	}

	// The generation's objects and the routing Service.
	g := s.generations("demo")
	want := generations{StatefulSets: []int64{st.Active}, Services: []int64{st.Active}, ConfigMaps: []int64{st.Active}, Selector: st.Active}
	if d := cmp.Diff(want, g); d != "" {
		t.Errorf("objects of a stable engine (-want +got):\n%s", d)
	}
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, fmt.Sprintf("demo-g%d", st.Active), metav1.GetOptions{})
	s.must(err)
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 2 || sts.Status.ReadyReplicas != 2 {
		t.Errorf("StatefulSet %s: replicas %v, ready %d; want 2 and 2", sts.Name, sts.Spec.Replicas, sts.Status.ReadyReplicas)
	}

	// The claim mirrors the composite's status. Crossplane copies it when
	// the composite changes, so the claim may lag a moment.
	s.wait(rolloutTimeout, "the claim's status to mirror its composite's", func(context.Context) (bool, string, error) {
		claim, err := s.get(eng)
		if err != nil || claim == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		x, err := s.composite(eng)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		d := cmp.Diff(mirrored(x), mirrored(claim))
		return d == "", "(-composite +claim):\n" + d, nil
	})

	// kubectl get fireng, as a user would look: the API server's table of
	// the claims, which is what kubectl prints (harness.Table). The columns
	// read the claim, whose conditions Crossplane's claim controller copies from its
	// cache of the composite: right after a rollout they can lag (or show
	// a moment older) for a reconcile or two, so the table must settle on
	// the stable engine rather than show it at one instant.
	wantRows := []map[string]string{{
		"NAME": "demo", "REPLICAS": "2", "PHASE": "stable", "GENERATION": fmt.Sprint(st.Active),
		"SYNCED": "True", "READY": "True",
	}}
	s.wait(rolloutTimeout, "kubectl get fireng to show the stable engine", func(ctx context.Context) (bool, string, error) {
		rows, err := cp.Table(ctx, harness.EngineGVK, s.ns)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		d := cmp.Diff(wantRows, rows, ignoreColumns("AGE", "CONNECTION-SECRET"))
		return d == "", "(-want +got):\n" + d, nil
	})
}

// mirrored is the part of a status the claim syncer copies: everything but
// Crossplane's own machinery. Crossplane v2.4 counts observedGeneration as
// machinery and never copies it; it would be the composite's generation,
// not the claim's, anyway.
func mirrored(u *unstructured.Unstructured) map[string]any {
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	out := map[string]any{}
	for k, v := range st {
		switch k {
		case "conditions", "connectionDetails", "claimConditionTypes", "observedGeneration":
			continue
		}
		out[k] = v
	}
	var conds []any
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		m, _ := c.(map[string]any)
		switch m["type"] {
		case "EngineReady", "InstanceReady":
			conds = append(conds, map[string]any{"type": m["type"], "status": m["status"], "reason": m["reason"], "message": m["message"]})
		}
	}
	out["conditions"] = conds
	return out
}

func ignoreColumns(cols ...string) cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		mi, ok := p.Last().(cmp.MapIndex)
		if !ok {
			return false
		}
		for _, c := range cols {
			if mi.Key().String() == c {
				return true
			}
		}
		return false
	}, cmp.Ignore())
}
