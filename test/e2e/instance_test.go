package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 1: an instance composes PostgreSQL, the metadata service and the
// gateway, and publishes each endpoint only once that workload is Ready.
func TestInstanceProvisions(t *testing.T) {
	s := newScenario(t, "s1-instance")
	inst := s.instance("demo")
	// Hold the metadata and gateway pods so the test sees the instance
	// before and after each workload becomes Ready.
	hold := map[string]any{harness.HoldLabel: "true"}
	set(t, inst, hold, "spec", "metadata", "template", "metadata", "labels")
	set(t, inst, hold, "spec", "gateway", "template", "metadata", "labels")
	s.apply(inst)

	want := []composed{
		// What engines read of the instance (package instancestate).
		{"ConfigMap", "engine-state"},
		{"ConfigMap", "gateway"}, {"ConfigMap", "metadata"},
		{"Deployment", "gateway"}, {"Deployment", "metadata"},
		{"PodDisruptionBudget", "gateway"},
		// The gateway's identity and the Role its wake agent uses.
		{"Role", "gateway"}, {"RoleBinding", "gateway"},
		{"Secret", "postgres"},
		{"Service", "gateway"}, {"Service", "metadata"}, {"Service", "postgres"},
		{"ServiceAccount", "gateway"},
		{"StatefulSet", "postgres"},
	}
	var got []composed
	s.wait(instanceReadyTimeout, "the instance's composed objects", func(context.Context) (bool, string, error) {
		var err error
		got, err = s.composedObjects(inst)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		return cmp.Diff(want, got) == "", fmt.Sprintf("composed %v", got), nil
	})

	// Held: the workloads exist but are not Ready, so nothing is published.
	xr := s.compositeName(inst)
	calls := s.functionCalls(xr)
	s.consistently(rolloutTimeout, "no endpoint published while the metadata and gateway pods are not Ready", func() (bool, string) {
		st := s.instanceStatus(inst)
		return st.MetadataEndpoint == "" && st.GatewayEndpoint == "" && st.Phase != "Ready", fmt.Sprintf("%+v", st)
	}, func() bool { return s.functionCalls(xr) >= calls+3 })

	s.releasePods("firebolt.io/component=metadata", 1)
	s.wait(instanceReadyTimeout, "the metadata endpoint, and still no gateway endpoint", func(context.Context) (bool, string, error) {
		st := s.instanceStatus(inst)
		if st.GatewayEndpoint != "" {
			return false, fmt.Sprintf("%+v", st), fmt.Errorf("gateway endpoint published while its pods are held")
		}
		return st.MetadataEndpoint != "" && st.MetadataReady, fmt.Sprintf("%+v", st), nil
	})

	s.releasePods("firebolt.io/component=gateway", 2)
	s.waitInstanceReady(inst)
	st := s.instanceStatus(inst)
	if st.MetadataEndpoint == "" || st.GatewayEndpoint == "" || !st.MetadataReady || !st.GatewayReady || st.ID == "" {
		t.Errorf("Ready instance status %+v: want both endpoints, both ready flags and an id", st)
	}
}

// composed is a composed object's kind and component.
type composed struct{ Kind, Component string }

// composedObjects reads every object the claim's composite references and
// checks it exists.
func (s *scenario) composedObjects(claim *unstructured.Unstructured) ([]composed, error) {
	x, err := s.composite(claim)
	if err != nil {
		return nil, err
	}
	refs, _, _ := unstructured.NestedSlice(x.Object, "spec", "resourceRefs")
	var out []composed
	for _, r := range refs {
		m, _ := r.(map[string]any)
		ref := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": m["apiVersion"], "kind": m["kind"],
			"metadata": map[string]any{"name": m["name"], "namespace": m["namespace"]},
		}}
		o, err := s.get(ref)
		if err != nil {
			return nil, fmt.Errorf("%s %v/%v referenced but not readable: %w", m["kind"], m["namespace"], m["name"], err)
		}
		if o == nil {
			return nil, fmt.Errorf("%s %v/%v referenced but not found", m["kind"], m["namespace"], m["name"])
		}
		out = append(out, composed{Kind: o.GetKind(), Component: o.GetLabels()["firebolt.io/component"]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Component < out[j].Component
	})
	return out, nil
}

// composite reads the composite a claim is bound to.
func (s *scenario) composite(claim *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	c, err := s.get(claim)
	if err != nil {
		return nil, fmt.Errorf("claim not readable: %w", err)
	}
	if c == nil {
		return nil, errors.New("claim not found")
	}
	name, _, _ := unstructured.NestedString(c.Object, "spec", "resourceRef", "name")
	if name == "" {
		return nil, fmt.Errorf("claim not bound to a composite yet")
	}
	gvk := schema.GroupVersionKind{Group: harness.Group, Version: "v1alpha1", Kind: "X" + claim.GetKind()}
	ri, err := cp.Resource(gvk, "")
	if err != nil {
		return nil, err
	}
	return ri.Get(s.ctx, name, metav1.GetOptions{})
}

// compositeName waits for the claim's composite and returns its name.
func (s *scenario) compositeName(claim *unstructured.Unstructured) string {
	s.t.Helper()
	var name string
	s.wait(rolloutTimeout, "the composite of "+claim.GetName(), func(context.Context) (bool, string, error) {
		x, err := s.composite(claim)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		name = x.GetName()
		return true, "", nil
	})
	return name
}

// instanceStatus is the instance claim's status as Crossplane copied it
// from the composite.
type instanceStatus struct {
	Phase                       string
	MetadataEndpoint            string
	GatewayEndpoint             string
	MetadataReady, GatewayReady bool
	ID                          string
}

func (s *scenario) instanceStatus(inst *unstructured.Unstructured) instanceStatus {
	u, err := s.get(inst)
	if err != nil || u == nil {
		return instanceStatus{}
	}
	str := func(f string) string { v, _, _ := unstructured.NestedString(u.Object, "status", f); return v }
	b := func(f string) bool { v, _, _ := unstructured.NestedBool(u.Object, "status", f); return v }
	return instanceStatus{
		Phase: str("phase"), MetadataEndpoint: str("metadataEndpoint"), GatewayEndpoint: str("gatewayEndpoint"),
		MetadataReady: b("metadataReady"), GatewayReady: b("gatewayReady"), ID: str("id"),
	}
}
