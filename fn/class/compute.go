package class

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// Plan is what compute decides.
type Plan struct {
	Status    v1alpha1.FireboltEngineClassStatus
	Condition Condition
	Warning   string // an event, only on a transition to not admissible
	Ready     bool
	TTL       time.Duration
	// Requirement lists the namespace's engines; nil without a claim.
	Requirement *fnv1.ResourceSelector
	// Claim asks for the class's own claim, for its generation.
	Claim *fnv1.ResourceSelector
}

// Compute decides the class's status. It is pure.
func Compute(in Inputs, cfg v1beta1.Resolved) Plan {
	if in.Claim == "" {
		// Engines name a class by its claim: without one nothing can be
		// counted, so the published status stays as it is.
		return Plan{
			TTL:       cfg.StableTTL,
			Status:    in.XR.Status,
			Condition: composite.ClaimLabelsMissing(TypeAdmissible, in.XR.Name, "engine classes", v1alpha1.FireboltEngineClassKind),
		}
	}
	p := Plan{
		TTL:         cfg.StableTTL,
		Requirement: EnginesSelector(in.Namespace),
		Claim:       claimgen.Selector(v1alpha1.SchemeGroupVersion.String(), v1alpha1.FireboltEngineClassKind, in.Claim, in.Namespace),
		Status: v1alpha1.FireboltEngineClassStatus{
			// Until Crossplane has listed the engines (only on a first
			// call), keep what is published rather than flap to none.
			BoundEngines:     in.XR.Status.BoundEngines,
			BoundEngineNames: in.XR.Status.BoundEngineNames,
		},
	}
	if in.EnginesResolved {
		p.Status.BoundEngineNames = nil
		for _, e := range in.Engines {
			if e.Class == in.Claim {
				p.Status.BoundEngineNames = append(p.Status.BoundEngineNames, e.Name)
			}
		}
		slices.Sort(p.Status.BoundEngineNames)
		p.Status.BoundEngines = int32(len(p.Status.BoundEngineNames))
	}

	errs := podtemplate.Validate(&in.XR.Spec.Template, podtemplate.EngineRules, field.NewPath("spec", "template"))
	if len(errs) == 0 {
		p.Condition = Condition{Type: TypeAdmissible, Status: metav1.ConditionTrue, Reason: ReasonAdmissible,
			Message: "spec.template sets no operator-owned field"}
		p.Ready = true
		p.Status.ObservedGeneration = observed(in, true)
		return p
	}
	p.Status.ObservedGeneration = observed(in, false)
	p.Condition = Condition{Type: TypeAdmissible, Status: metav1.ConditionFalse, Reason: ReasonOperatorOwnedFieldSet,
		Message: podtemplate.Rejected("spec.template", errs)}
	if old := in.Admissible; old == nil || old.Reason != p.Condition.Reason || old.Status != p.Condition.Status {
		p.Warning = p.Condition.Message
	}
	return p
}

// observed is the claim generation the class vouches for: a class composes
// nothing, so its spec is in effect once the composite holds it and admits
// it.
func observed(in Inputs, admissible bool) int64 {
	return claimgen.Observed(in.XR.Status.ObservedGeneration, in.ClaimGen, admissible)
}
