package e2e

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestMigration moves the original operator's instances and engines over
// (original_test.go made them, and migrated every namespace up to step 5
// before the Configuration was installed, each namespace interrupted after
// another step): the migration of every namespace is interrupted once more
// after step 6, then run to the end. Every claim reaches Ready with the
// original's account id, nothing the original ran restarted or was
// re-created (every pod, volume claim, Secret and StatefulSet keeps its
// UID), and a later replicas edit rolls a new generation and drains the
// adopted one.
func TestMigration(t *testing.T) {
	s := newScenario(t, "migrate-check")
	original.Lock()
	setUp := original.err
	original.Unlock()
	if setUp != nil {
		t.Fatalf("the original operator and the migration before the packages: %v", setUp)
	}

	if r := migrate(s.ctx, cp, 6, "-A"); r.Code != 1 || !strings.Contains(r.Stderr, "interrupted before step 7/7") {
		t.Fatalf("migration interrupted after step 6: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := migrate(s.ctx, cp, 0, "-A"); r.Code != 0 {
		t.Fatalf("migration run again: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	for _, ns := range append(append([]string(nil), migrationNamespaces...), migrationRefusedNamespace) {
		in := &scenario{t: t, ctx: s.ctx, ns: ns}
		inst := in.instance("demo")
		in.waitInstanceReady(inst)
		u, err := in.get(inst)
		in.must(err)
		if id, _, _ := unstructured.NestedString(u.Object, "status", "id"); id != original.ids[ns] {
			t.Errorf("%s: instance account id %q, want the original's %q", ns, id, original.ids[ns])
		}
		for _, e := range originalEngines {
			st := in.waitEngine(in.engine(e.name, "demo", "", int64(e.replicas)), rolloutTimeout, "adopted and Ready", func(st engineState) bool {
				return st.Phase == "stable" && st.Ready.Status == "True" && st.Active == int64(e.gen)
			})
			if st.Current != int64(e.gen) {
				t.Errorf("%s: engine %s current generation %d, want the adopted %d", ns, e.name, st.Current, e.gen)
			}
		}
		after, err := liveUIDs(s.ctx, cp, ns)
		in.must(err)
		if diff := cmp.Diff(original.uids[ns], after); diff != "" {
			t.Errorf("%s: what the original ran was restarted or re-created (-before +after):\n%s", ns, diff)
		}
	}

	// The next spec change rolls a new generation and drains the adopted
	// one, as any rollout.
	in := &scenario{t: t, ctx: s.ctx, ns: migrationNamespaces[0]}
	eng := in.engine("analytics", "demo", "", 3)
	in.applyEngineSpec("analytics", map[string]any{"replicas": int64(3)})
	st := in.waitStable(eng, 3)
	if st.Active != 4 {
		t.Errorf("after a replicas edit the engine serves generation %d, want 4", st.Active)
	}
}
