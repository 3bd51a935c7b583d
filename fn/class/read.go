package class

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	xperrors "github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Inputs is what compute needs, decoded from the request.
type Inputs struct {
	// XR is the observed composite.
	XR v1alpha1.XFireboltEngineClass
	// Spec is the composite's spec as Crossplane sent it, for the
	// ConfigMap that publishes it verbatim.
	Spec map[string]any
	// Claim and Namespace identify the class as engines name it; empty
	// when the composite has no claim labels.
	Claim     string
	Namespace string
	// Bindings are the engines' bindings to the class, by their labels;
	// BindingsResolved is false until Crossplane has listed them.
	Bindings         []Binding
	BindingsResolved bool
	// Observed are the observed composed resources by
	// composition-resource-name: at most the spec's ConfigMap and the
	// Usage of the claim.
	Observed map[resource.Name]*composed.Unstructured
	// Admissible is the composite's Admissible condition now, to tell
	// transitions; nil when it has none.
	Admissible *Condition
	// Breaker: whether Crossplane's circuit breaker for the class is
	// open, and since when.
	Breaker composite.Breaker
	// ClaimGen is the FireboltEngineClass claim itself, read for its
	// generation.
	ClaimGen claimgen.Claim
}

// Binding is what the class needs of an engine's binding ConfigMap
// (engine.Binding): only its labels and whether it is being deleted are
// read, so nothing else in it can stop it from counting.
type Binding struct {
	Engine   string // its firebolt.io/engine label
	Class    string // its firebolt.io/engine-class-binding label
	Deleting bool
}

// Condition is a status condition as compute sees it.
type Condition = composite.Condition

func read(c composite.Call) (Inputs, error) {
	in := Inputs{}
	if err := composite.Decode(c.XR.Resource.UnstructuredContent(), &in.XR); err != nil {
		return Inputs{}, xperrors.Wrap(err, "cannot decode XFireboltEngineClass")
	}
	in.Spec, _, _ = unstructured.NestedMap(c.XR.Resource.Object, "spec")
	in.Admissible = composite.ConditionOf(c.XR.Resource.UnstructuredContent(), TypeAdmissible)
	in.Breaker = composite.BreakerOf(c.XR.Resource.UnstructuredContent())
	var err error
	if in.Observed, err = composite.ObservedComposed(c.Req); err != nil {
		return Inputs{}, err
	}
	claim := composite.ClaimOf(c.XR)
	if !claim.Known() {
		return in, nil
	}
	in.Claim, in.Namespace = claim.Name, claim.Namespace
	if in.ClaimGen, err = claimgen.Read(c.Req, in.Claim, in.XR.Spec); err != nil {
		return Inputs{}, err
	}
	items, resolved, err := composite.Required(c.Req, ReqBindings, "engine bindings of the class")
	if err != nil {
		return Inputs{}, err
	}
	in.BindingsResolved = resolved
	for _, it := range items {
		l := it.Resource.GetLabels()
		in.Bindings = append(in.Bindings, Binding{Engine: l[contract.LabelEngine], Class: l[contract.LabelEngineClassBinding], Deleting: it.Resource.GetDeletionTimestamp() != nil})
	}
	return in, nil
}

// BindingsSelector selects the ConfigMaps labelled as binding an engine to
// class in namespace: each engine that names the class composes one.
// Crossplane v2.4 lists a label requirement with client.MatchingLabels and
// its dependency tracker re-runs the class when an object of the kind
// matching the labels changes, so only an engine binding or unbinding calls
// the class again, not every ConfigMap event in the namespace.
func BindingsSelector(namespace, class string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: "v1",
		Kind:       "ConfigMap",
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{
			Labels: map[string]string{contract.LabelEngineClassBinding: class},
		}},
		Namespace: &namespace,
	}
}
