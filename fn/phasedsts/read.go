package phasedsts

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	appsapi "github.com/firebolt-db/firebolt-crossplane/apis/apps/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
)

// Requirement names under which the function asks Crossplane for what it
// reads besides the composite.
const (
	// ReqSecret is the Secret named by check.query.secretRef.
	ReqSecret = "secret"
	// ReqRolledPod is the pod the previous step let go: the one whose
	// ordinal is the StatefulSet's partition.
	ReqRolledPod = "rolled-pod"
)

// LabelRevision is the label the StatefulSet controller puts on each pod:
// the name of the revision the pod runs.
const LabelRevision = appsv1.ControllerRevisionHashLabelKey

// Inputs is what compute needs, decoded from the request.
type Inputs struct {
	XR    appsapi.XPhasedStatefulSet
	Claim composite.Claim
	// Observed holds the observed composed resources, returned unchanged
	// when nothing can be decided.
	Observed map[resource.Name]*composed.Unstructured
	// StatefulSet is the observed StatefulSet; nil before it exists.
	StatefulSet *appsv1.StatefulSet
	// Secret is the credentials Secret's data when Crossplane found it;
	// SecretResolved is false until it has tried.
	Secret         map[string][]byte
	SecretFound    bool
	SecretResolved bool
	// RolledPod is the pod at the partition, when Crossplane sent it.
	RolledPod *phased.Pod
	// ClaimGen is the claim itself, read for its generation.
	ClaimGen claimgen.Claim
	// Recent is the function's last move of this rollout's partition,
	// from its memory (phased.Memory); nil when it has none.
	Recent *phased.Recent
	// Breaker: whether Crossplane's circuit breaker for the composite is
	// open, and since when.
	Breaker composite.Breaker
}

func read(req *fnv1.RunFunctionRequest, xr *resource.Composite) (Inputs, error) {
	in := Inputs{Claim: composite.ClaimOf(xr), Breaker: composite.BreakerOf(xr.Resource.UnstructuredContent())}
	if err := composite.Decode(xr.Resource.UnstructuredContent(), &in.XR); err != nil {
		return Inputs{}, errors.Wrap(err, "cannot decode XPhasedStatefulSet")
	}
	var err error
	if in.Observed, err = composite.ObservedComposed(req); err != nil {
		return Inputs{}, err
	}
	if o, ok := in.Observed[ResourceName]; ok {
		sts := &appsv1.StatefulSet{}
		if err := composite.Decode(o.UnstructuredContent(), sts); err != nil {
			return Inputs{}, errors.Wrap(err, "cannot decode the observed StatefulSet")
		}
		in.StatefulSet = sts
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
	if sts := in.StatefulSet; sts != nil {
		if p, ok := phased.RolledPod(sts); ok {
			name := phased.PodName(in.Claim.Name, p)
			u, _, err := composite.RequiredNamed(req, ReqRolledPod, "pod "+name, name)
			if err != nil {
				return Inputs{}, err
			}
			if u != nil {
				in.RolledPod = &phased.Pod{Ordinal: p, Revision: u.GetLabels()[LabelRevision]}
			}
		}
	}
	return in, nil
}

// PodSelector asks Crossplane for one pod of the StatefulSet by name.
func PodSelector(namespace, name string) *fnv1.ResourceSelector {
	return composite.Select("v1", "Pod", namespace, name)
}

// SecretSelector asks Crossplane for the credentials Secret by name.
func SecretSelector(namespace, name string) *fnv1.ResourceSelector {
	return composite.Select("v1", "Secret", namespace, name)
}
