package class

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

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
	// Requirement lists the engines' bindings to the class; nil without a
	// claim.
	Requirement *fnv1.ResourceSelector
	// InUse composes the Usage of the class's claim (InUse); InUseReady is
	// whether Crossplane observes it.
	InUse, InUseReady bool
	// Publish is the ConfigMap publishing the class's spec to its
	// engines; nil without a claim.
	Publish *Publish
	// Keep are observed objects returned as they are, by a class that
	// cannot decide anything.
	Keep map[resource.Name]composite.Desired
	// Claim asks for the class's own claim, for its generation.
	Claim *fnv1.ResourceSelector
}

// Publish is what SpecConfigMap renders from, and whether Crossplane
// observes the ConfigMap.
type Publish struct {
	Namespace, Class string
	Spec             Published
	Ready            bool
}

// While the class's circuit breaker is open, Crossplane lets one event
// through every half-open interval (30s at its defaults) and drops the
// rest. An edit is dropped only if another event was let through in the
// 30s before it, and the class's events are its engines binding, which
// change its status within a call: so an edit is at risk only while the
// status is changing. Then the class polls every TTLWatchesDropped (5s);
// once its status has rested for TTLRestedAfter the breaker lets an edit
// through itself, and the class polls every TTLWatchesDroppedAtRest, a
// backstop. Each poll is a round of Crossplane's writes (about three
// requests): a 5s poll for as long as the breaker stays open (5 to 10
// minutes after the binds) was a third of an idle request per engine per
// minute at 100 engines.
const (
	TTLWatchesDropped       = composite.TTLWatchesDropped
	TTLWatchesDroppedAtRest = 30 * time.Second
	TTLRestedAfter          = time.Minute
)

// Compute decides the class's status at now. It is pure.
func Compute(in Inputs, cfg v1beta1.Resolved, now time.Time) Plan {
	p := decide(in, cfg)
	changed := !sameStatus(in.XR.Status, p.Status)
	// The breaker opened by binding many engines stays open at rest until
	// an event for the class arrives: the reprobe stamp is that event.
	p.Status.LastReconciled = composite.LastReconciled(in.XR.Status.LastReconciled, changed, in.Breaker, now)
	if in.Breaker.Open {
		// Every engine bound to the class composes a binding, a watch
		// event of the class: binding many engines at once can open the
		// class's circuit breaker. An edit of the class then reaches its
		// composite as a dropped event, and its engines read the spec from
		// what the class publishes: only a timed call would notice it.
		ttl := TTLWatchesDroppedAtRest
		if last := in.XR.Status.LastReconciled; changed || last == nil || now.Sub(last.Time) < TTLRestedAfter {
			ttl = TTLWatchesDropped
		}
		p.TTL = min(p.TTL, ttl)
	}
	return p
}

// sameStatus compares statuses as they are written, ignoring
// lastReconciled. An absent list of engine names is written as an empty
// one, and the semantic comparison holds the two the same.
func sameStatus(a, b v1alpha1.FireboltEngineClassStatus) bool {
	a.LastReconciled, b.LastReconciled = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

func decide(in Inputs, cfg v1beta1.Resolved) Plan {
	if in.Claim == "" {
		// Engines name a class by its claim: without one nothing can be
		// counted or published, so the status and the ConfigMap stay as
		// they are.
		return Plan{
			TTL:       cfg.StableTTL,
			Status:    in.XR.Status,
			Keep:      composite.KeepObserved(in.Observed),
			Condition: composite.ClaimLabelsMissing(TypeAdmissible, in.XR.Name, "engine classes", v1alpha1.FireboltEngineClassKind),
		}
	}
	p := Plan{
		TTL:         cfg.StableTTL,
		Requirement: BindingsSelector(in.Namespace, in.Claim),
		Publish:     &Publish{Namespace: in.Namespace, Class: in.Claim, Spec: PublishSpec(in.Spec), Ready: in.Observed[SpecResourceName] != nil},
		Claim:       claimgen.Selector(v1alpha1.SchemeGroupVersion.String(), v1alpha1.FireboltEngineClassKind, in.Claim, in.Namespace),
		Status: v1alpha1.FireboltEngineClassStatus{
			// Until Crossplane has listed the bindings (only on a first
			// call), keep what is published rather than flap to none.
			BoundEngines:     in.XR.Status.BoundEngines,
			BoundEngineNames: in.XR.Status.BoundEngineNames,
		},
		// Likewise the Usage: kept while the bindings are unknown, never
		// dropped on a guess.
		InUse:      in.Observed[InUseResourceName] != nil,
		InUseReady: in.Observed[InUseResourceName] != nil,
	}
	if in.BindingsResolved {
		p.Status.BoundEngineNames = boundEngines(in.Bindings, in.Claim)
		p.Status.BoundEngines = int32(len(p.Status.BoundEngineNames)) //nolint:gosec // A list of 2^31 names cannot be held in memory.
		p.InUse = len(p.Status.BoundEngineNames) > 0
	}

	if msg := p.Publish.Spec.Err; msg != "" {
		// Its engines report it too, from the ConfigMap, and keep what they
		// run.
		return rejected(in, p, Condition{Type: TypeAdmissible, Status: metav1.ConditionFalse, Reason: ReasonSpecNotPublished, Message: msg})
	}
	errs := podtemplate.Validate(&in.XR.Spec.Template, podtemplate.EngineRules, field.NewPath("spec", "template"))
	if len(errs) == 0 {
		p.Condition = Condition{Type: TypeAdmissible, Status: metav1.ConditionTrue, Reason: ReasonAdmissible,
			Message: "spec.template sets no operator-owned field"}
		p.Ready = true
		p.Status.ObservedGeneration = observed(in, true)
		return p
	}
	return rejected(in, p, Condition{Type: TypeAdmissible, Status: metav1.ConditionFalse, Reason: ReasonOperatorOwnedFieldSet,
		Message: podtemplate.Rejected("spec.template", errs)})
}

// rejected is p for a class whose spec is not admissible: not ready, the
// generation not vouched for, a warning on the transition only.
func rejected(in Inputs, p Plan, c Condition) Plan {
	p.Status.ObservedGeneration = observed(in, false)
	p.Condition = c
	if old := in.Admissible; old == nil || old.Reason != c.Reason || old.Status != c.Status {
		p.Warning = c.Message
	}
	return p
}

// observed is the claim generation the class vouches for: its spec is in
// effect once the composite holds it and admits it (Crossplane applies the
// ConfigMap publishing it before it writes this status).
func observed(in Inputs, admissible bool) int64 {
	return claimgen.Observed(in.XR.Status.ObservedGeneration, in.ClaimGen, admissible)
}

// boundEngines names the engines bound to class, sorted, each once. A
// binding being deleted belongs to an engine that no longer names the
// class, and one without the engine label or labelled for another class
// was not composed by an engine for this class.
func boundEngines(bindings []Binding, class string) []string {
	var names []string
	for _, b := range bindings {
		if b.Engine != "" && b.Class == class && !b.Deleting {
			names = append(names, b.Engine)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
