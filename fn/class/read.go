package class

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	xperrors "github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
)

// Claim labels Crossplane puts on a composite that has a claim.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)

// Inputs is what compute needs, decoded from the request.
type Inputs struct {
	// XR is the observed composite.
	XR v1alpha1.XFireboltEngineClass
	// Claim and Namespace identify the class as engines name it.
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
type Condition struct {
	Type    string                 `json:"type"`
	Status  corev1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason"`
	Message string                 `json:"message,omitempty"`
}

func read(req *fnv1.RunFunctionRequest) (Inputs, error) {
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return Inputs{}, xperrors.Wrap(err, "cannot get observed composite resource")
	}
	in := Inputs{}
	var conds struct {
		Status struct {
			Conditions []Condition `json:"conditions"`
		} `json:"status"`
	}
	if err := fromMap(oxr.Resource.UnstructuredContent(), &in.XR, &conds); err != nil {
		return Inputs{}, xperrors.Wrap(err, "cannot decode XFireboltEngineClass")
	}
	for i := range conds.Status.Conditions {
		if conds.Status.Conditions[i].Type == TypeAdmissible {
			in.Admissible = &conds.Status.Conditions[i]
		}
	}
	l := oxr.Resource.GetLabels()
	in.Claim, in.Namespace = l[labelClaimName], l[labelClaimNamespace]
	if in.Claim == "" || in.Namespace == "" {
		return Inputs{}, xperrors.Errorf("composite has no %s and %s labels: engines name a class by its FireboltEngineClass claim, so apply a FireboltEngineClass claim instead of an XFireboltEngineClass", labelClaimName, labelClaimNamespace)
	}

	if in.ClaimGen, err = claimgen.Read(req, in.Claim, in.XR.Spec); err != nil {
		return Inputs{}, err
	}

	items, resolved, err := request.GetRequiredResource(req, ReqEngines)
	if err != nil {
		return Inputs{}, xperrors.Wrap(err, "cannot get required FireboltEngine claims")
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

// fromMap decodes unstructured content into typed values through JSON,
// which also turns the float64 numbers of a protobuf Struct into integers.
func fromMap(m map[string]any, into ...any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	for _, v := range into {
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
	}
	return nil
}
