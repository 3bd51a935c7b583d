package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 10: deleting the engine claim removes its composite and every
// object the engine composed, pods included.
func TestDeleteEngineRemovesEverything(t *testing.T) {
	s := newScenario(t, "s10-delete")
	eng, _ := s.stableEngine("demo", 2)
	x, err := s.composite(eng)
	s.must(err)
	refs, _, _ := unstructured.NestedSlice(x.Object, "spec", "resourceRefs")
	if len(refs) == 0 {
		t.Fatal("the engine's composite references no composed objects")
	}
	objs := make([]*unstructured.Unstructured, 0, len(refs)+1)
	for _, r := range refs {
		m, _ := r.(map[string]any)
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": m["apiVersion"], "kind": m["kind"],
			"metadata": map[string]any{"name": m["name"], "namespace": m["namespace"]},
		}})
	}
	objs = append(objs, x)

	s.must(cp.Delete(s.ctx, eng))
	s.wait(deletionTimeout, "the claim, its composite, every composed object and the pods gone", func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, o := range append([]*unstructured.Unstructured{eng}, objs...) {
			u, err := s.get(o)
			if err != nil {
				return false, harness.SeenErr(err), nil
			}
			if u != nil {
				left = append(left, fmt.Sprintf("%s %s", u.GetKind(), u.GetName()))
			}
		}
		l, err := cp.Kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: labelEngine + "=demo"})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		for _, p := range l.Items {
			left = append(left, "Pod "+p.Name)
		}
		return len(left) == 0, "left: " + strings.Join(left, ", "), nil
	})
}
