package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnclass "github.com/firebolt-db/firebolt-crossplane/fn/class"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 7: editing a class rolls a new generation of every engine bound
// to it; deleting the class while engines use it is refused, and succeeds
// once they are gone.
func TestClassEditRollsBoundEngines(t *testing.T) {
	s := newScenario(t, "s7-class")
	inst := s.instance("demo")
	s.apply(inst)
	class := s.example("engineclass.yaml", "standard")
	s.apply(class)
	engines := []*unstructured.Unstructured{s.engine("e1", "demo", "standard", 1), s.engine("e2", "demo", "standard", 1)}
	for _, e := range engines {
		s.apply(e)
	}
	s.waitInstanceReady(inst)
	before := map[string]int64{}
	for _, e := range engines {
		before[e.GetName()] = s.waitStable(e, -1).Active
	}
	s.wait(rolloutTimeout, "the class to count and name its 2 bound engines", func(context.Context) (bool, string, error) {
		u, err := s.get(class)
		if err != nil || u == nil {
			return false, fmt.Sprintf("class: %v", err), nil
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "status", "boundEngines")
		names, _, _ := unstructured.NestedStringSlice(u.Object, "status", "boundEngineNames")
		return n == 2 && slices.Equal(names, []string{"e1", "e2"}), fmt.Sprintf("boundEngines=%d boundEngineNames=%q", n, names), nil
	})

	edited := class.DeepCopy()
	set(t, edited, "data-platform", "spec", "template", "metadata", "labels", "team")
	s.apply(edited)
	for _, e := range engines {
		st := s.waitStable(e, before[e.GetName()])
		pods := s.pods(e.GetName(), st.Active)
		if len(pods) != 1 || pods[0].Labels["team"] != "data-platform" {
			t.Errorf("engine %s generation %d: pods %d, want 1 carrying the edited class's label team=data-platform", e.GetName(), st.Active, len(pods))
		}
	}

	// Each engine binds to the class by a ConfigMap naming only itself and
	// the class, so a bind rewrites no other engine's; the class, having
	// engines, holds one Usage of its claim; it publishes its spec in a
	// ConfigMap, which the engines read instead of the class claim.
	for _, e := range engines {
		b, err := cp.Kube.CoreV1().ConfigMaps(s.ns).Get(s.ctx, engine.BindingName(e.GetName(), "standard"), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("binding of engine %s: %v", e.GetName(), err)
		}
		if got := b.Labels[contract.LabelEngineClassBinding]; got != "standard" || b.Labels[contract.LabelEngine] != e.GetName() {
			t.Errorf("binding of engine %s: labels %v, want %s=standard and %s=%s", e.GetName(), b.Labels, contract.LabelEngineClassBinding, contract.LabelEngine, e.GetName())
		}
	}
	usage := &unstructured.Unstructured{}
	usage.SetAPIVersion(contract.UsageAPIVersion)
	usage.SetKind(contract.UsageKind)
	usage.SetNamespace(s.ns)
	usage.SetName(fnclass.InUseName("standard"))
	if got, err := s.get(usage); err != nil || got == nil {
		t.Fatalf("the class's Usage of its claim: %v, %v", got, err)
	} else if r, _, _ := unstructured.NestedString(got.Object, "spec", "reason"); r != fnclass.InUseReason("standard") {
		t.Errorf("the class's Usage: reason %q, want %q", r, fnclass.InUseReason("standard"))
	}
	if _, err := cp.Kube.CoreV1().ConfigMaps(s.ns).Get(s.ctx, contract.ClassSpecConfigMap("standard"), metav1.GetOptions{}); err != nil {
		t.Errorf("the class's spec ConfigMap: %v", err)
	}

	// In use: refused by the class's one Usage, whose reason points at the
	// class's list. The refusal comes from Crossplane's Usage webhook; while
	// another scenario restarts Crossplane the webhook call itself may fail,
	// which refuses too, so wait for the Usage's own answer.
	s.wait(rolloutTimeout, "deleting the class in use to be refused by its Usage", func(ctx context.Context) (bool, string, error) {
		err := cp.Delete(ctx, class)
		if err == nil {
			return false, "", fmt.Errorf("deleting class standard while engines use it was accepted")
		}
		msg := err.Error()
		plain := strings.ReplaceAll(msg, `\`, "")
		return strings.Contains(msg, "in-use by 1 usage(s)") && strings.Contains(plain, `FireboltEngineClass "standard" has engines bound to it`) &&
			strings.Contains(plain, "status.boundEngineNames"), msg, nil
	})
	if u, err := s.get(class); err != nil || u == nil || u.GetDeletionTimestamp() != nil {
		t.Fatalf("class after the refused deletion: %v, %v; want it present and not deleting", u, err)
	}

	for _, e := range engines {
		s.must(cp.Delete(s.ctx, e))
	}
	s.wait(deletionTimeout, "deleting the class once its engines are gone", func(ctx context.Context) (bool, string, error) {
		if u, err := s.get(class); err == nil && u == nil {
			return true, "", nil
		}
		if err := cp.Delete(ctx, class); err != nil {
			return false, harness.SeenErr(err), nil
		}
		return false, "deletion accepted", nil
	})
}
