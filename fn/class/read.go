package class

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	xperrors "github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Inputs is what compute needs, decoded from the request.
type Inputs struct {
	// XR is the observed composite.
	XR v1alpha1.XFireboltEngineClass
	// Claim and Namespace identify the class as engines name it; empty
	// when the composite has no claim labels.
	Claim     string
	Namespace string
	// Engines are the namespace's FireboltEngine claims; EnginesResolved
	// is false until Crossplane has listed them.
	Engines         []Engine
	EnginesResolved bool
	// Admissible is the composite's Admissible condition now, to tell
	// transitions; nil when it has none.
	Admissible *Condition
	// ClaimGen is the FireboltEngineClass claim itself, read for its
	// generation.
	ClaimGen claimgen.Claim
}

// Engine is what the class needs of a FireboltEngine claim. Only this is
// decoded, so an engine the class cannot make sense of otherwise still
// counts.
type Engine struct {
	Name  string
	Class string // spec.engineClassRef, "" when unset
}

// Condition is a status condition as compute sees it.
type Condition = composite.Condition

func read(c composite.Call) (Inputs, error) {
	in := Inputs{}
	if err := composite.Decode(c.XR.Resource.UnstructuredContent(), &in.XR); err != nil {
		return Inputs{}, xperrors.Wrap(err, "cannot decode XFireboltEngineClass")
	}
	in.Admissible = composite.ConditionOf(c.XR.Resource.UnstructuredContent(), TypeAdmissible)
	claim := composite.ClaimOf(c.XR)
	if !claim.Known() {
		return in, nil
	}
	in.Claim, in.Namespace = claim.Name, claim.Namespace

	var err error
	if in.ClaimGen, err = claimgen.Read(c.Req, in.Claim, in.XR.Spec); err != nil {
		return Inputs{}, err
	}

	items, resolved, err := composite.Required(c.Req, ReqEngines, "FireboltEngine claims")
	if err != nil {
		return Inputs{}, err
	}
	in.EnginesResolved = resolved
	for _, it := range items {
		ref, _, _ := unstructured.NestedString(it.Resource.Object, "spec", "engineClassRef")
		in.Engines = append(in.Engines, Engine{Name: it.Resource.GetName(), Class: ref})
	}
	return in, nil
}

// EnginesSelector selects every FireboltEngine claim in namespace.
// Crossplane v2.4 lists a label requirement with client.MatchingLabels, and
// an empty label set matches everything; its dependency tracker treats a
// reference with neither name nor labels as every object of the kind in the
// namespace, so an engine created, edited or deleted there re-runs the
// class.
func EnginesSelector(namespace string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: v1alpha1.SchemeGroupVersion.String(),
		Kind:       v1alpha1.FireboltEngineKind,
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{}},
		Namespace:  &namespace,
	}
}
