package phasedrollout

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	stsplus "github.com/firebolt-db/firebolt-crossplane/apis/stsplus/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
)

// Requirement names under which the function asks Crossplane for what it
// reads besides the composite.
const (
	// ReqTarget is the StatefulSet spec.targetRef names.
	ReqTarget = "target"
	// ReqSecret is the Secret named by check.query.secretRef.
	ReqSecret = "secret"
	// ReqRolledPod is the pod the previous step let go: the one whose
	// ordinal is the target's partition.
	ReqRolledPod = "rolled-pod"
	// ReqMarked is the PhasedRollout claim the target's marker annotation
	// names, when it names another one.
	ReqMarked = "marked-by"
)

// ResourceName is the composition-resource-name of the Object.
const ResourceName = "partition"

// Inputs is what compute needs, decoded from the request.
type Inputs struct {
	XR    stsplus.XPhasedRollout
	Claim composite.Claim
	// ClaimGen is the claim itself, read for its generation.
	ClaimGen claimgen.Claim
	// Recent is the function's last move of this rollout's partition,
	// from its memory (phased.Memory); nil when it has none.
	Recent *phased.Recent
	// Breaker: whether Crossplane's circuit breaker for the composite is
	// open, and since when.
	Breaker composite.Breaker
	// Observed holds the observed composed resources (the Object),
	// returned unchanged when nothing can be decided.
	Observed map[resource.Name]*composed.Unstructured
	// Conditions are the composite's conditions as the last call left them.
	Conditions map[string]composite.Condition

	// Target is the StatefulSet spec.targetRef names; nil when Crossplane
	// found none. TargetResolved is false until it has tried.
	Target         *appsv1.StatefulSet
	TargetResolved bool
	// RolledPod is the pod at the target's partition, when Crossplane
	// sent it.
	RolledPod *phased.Pod
	// Secret is the credentials Secret's data when Crossplane found it;
	// SecretResolved is false until it has tried.
	Secret         map[string][]byte
	SecretFound    bool
	SecretResolved bool
	// Marked is the other claim the target's marker annotation names.
	Marked MarkedBy
}

// MarkedBy is the PhasedRollout claim the target's marker annotation
// names, when it is not this claim.
type MarkedBy struct {
	// Name is the annotation's value; "" when it names this claim or is
	// absent.
	Name string
	// Resolved is false until Crossplane has tried to fetch the claim;
	// Found says it exists, TargetRef what it targets.
	Resolved, Found bool
	TargetRef       string
}

func read(req *fnv1.RunFunctionRequest, xr *resource.Composite) (Inputs, error) {
	in := Inputs{
		Claim:      composite.ClaimOf(xr),
		Breaker:    composite.BreakerOf(xr.Resource.UnstructuredContent()),
		Conditions: composite.Conditions(xr.Resource.UnstructuredContent()),
	}
	if err := composite.Decode(xr.Resource.UnstructuredContent(), &in.XR); err != nil {
		return Inputs{}, errors.Wrap(err, "cannot decode XPhasedRollout")
	}
	var err error
	if in.Observed, err = composite.ObservedComposed(req); err != nil {
		return Inputs{}, err
	}
	if !in.Claim.Known() {
		return in, nil
	}
	if in.ClaimGen, err = claimgen.Read(req, in.Claim.Name, in.XR.Spec); err != nil {
		return Inputs{}, err
	}
	if ref := in.XR.Spec.Check.Query.SecretRef; ref != "" {
		if in.Secret, in.SecretFound, in.SecretResolved, err = composite.RequiredSecret(req, ReqSecret, ref); err != nil {
			return Inputs{}, err
		}
	}
	target := in.XR.Spec.TargetRef
	u, resolved, err := composite.RequiredNamed(req, ReqTarget, "StatefulSet "+target, target)
	if err != nil {
		return Inputs{}, err
	}
	in.TargetResolved = resolved
	if u == nil {
		return in, nil
	}
	sts := &appsv1.StatefulSet{}
	if err := composite.Decode(u.UnstructuredContent(), sts); err != nil {
		return Inputs{}, errors.Wrapf(err, "cannot decode StatefulSet %s", target)
	}
	in.Target = sts
	if p, ok := phased.RolledPod(sts); ok {
		name := phased.PodName(target, p)
		pod, _, err := composite.RequiredNamed(req, ReqRolledPod, "pod "+name, name)
		if err != nil {
			return Inputs{}, err
		}
		if pod != nil {
			in.RolledPod = &phased.Pod{Ordinal: p, Revision: pod.GetLabels()[appsv1.ControllerRevisionHashLabelKey]}
		}
	}
	if m := sts.GetAnnotations()[stsplus.AnnotationManagedBy]; m != "" && m != in.Claim.Name {
		in.Marked.Name = m
		c, resolved, err := composite.RequiredNamed(req, ReqMarked, stsplus.Group+" PhasedRollout "+m, m)
		if err != nil {
			return Inputs{}, err
		}
		in.Marked.Resolved = resolved
		if c != nil {
			in.Marked.Found = true
			in.Marked.TargetRef, _, _ = unstructured.NestedString(c.Object, "spec", "targetRef")
		}
	}
	return in, nil
}
