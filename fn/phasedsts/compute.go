package phasedsts

import (
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	appsapi "github.com/firebolt-db/firebolt-crossplane/apis/apps/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

// TypeUpdated is the condition saying whether every pod runs the
// StatefulSet's update revision (phased.Updated).
const TypeUpdated = phased.TypeUpdated

// Reasons of the Updated condition besides phased.Updated's.
const (
	ReasonCreating    = "Creating"
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonTemplateRejected: the pod template asks for more than the
	// function input's pod-security allow-lists permit.
	ReasonTemplateRejected = "TemplateRejected"
)

// Status is the composite's status as this composer owns it.
type Status struct {
	v1alpha1.PhasedRolloutStatus `json:",inline"`
	ObservedGeneration           int64        `json:"observedGeneration"`
	LastReconciled               *metav1.Time `json:"lastReconciled,omitempty"`
}

// Plan is what one call decides.
type Plan struct {
	// NeedCheck: the check is due and was not run. The rest holds
	// everything as it is, and is written only when the check cannot run
	// yet.
	NeedCheck bool

	Status    Status
	Partition int32
	Resources map[resource.Name]composite.Desired
	Ready     bool
	Condition composite.Condition
	Results   []composite.Result
	Require   map[string]*fnv1.ResourceSelector
	TTL       time.Duration
	// Moved is what the function remembers of this call's move of the
	// partition, if it made one (phased.Remember).
	Moved *phased.Recent
}

// Compute decides the StatefulSet and the status from in at now; outcome
// is the check run for this call, if one was.
func Compute(in Inputs, cfg v1beta1.Resolved, now time.Time, outcome *promcheck.Outcome) Plan {
	prev := Status{PhasedRolloutStatus: in.XR.Status.PhasedRolloutStatus, ObservedGeneration: in.XR.Status.ObservedGeneration,
		LastReconciled: in.XR.Status.LastReconciled}
	if !in.Claim.Known() {
		return Plan{
			Status:    prev,
			Resources: composite.KeepObserved(in.Observed),
			Condition: composite.ClaimLabelsMissing(TypeUpdated, in.XR.GetName(), "phased StatefulSets", v1alpha1.PhasedStatefulSetKind),
			TTL:       cfg.StableTTL,
		}
	}
	require := map[string]*fnv1.ResourceSelector{
		claimgen.Requirement: claimgen.Selector(v1alpha1.AppsGroup+"/"+v1alpha1.Version, v1alpha1.PhasedStatefulSetKind, in.Claim.Name, in.Claim.Namespace),
	}
	if ref := in.XR.Spec.Check.Query.SecretRef; ref != "" {
		require[ReqSecret] = SecretSelector(in.Claim.Namespace, ref)
	}
	r, err := Render(in.Claim.Name, in.Claim.Namespace, in.XR.Spec)
	if err == nil {
		err = validate(in.XR.Spec)
	}
	if err != nil {
		return invalid(in, prev, require, cfg, ReasonInvalidSpec, err.Error())
	}
	// The pod runs with the function's authority: it may ask for no more
	// than an engine's pods may (the API server refuses most of it first).
	tpl := field.NewPath("spec", "statefulSet", "spec", "template")
	if errs := podtemplate.CheckRendered(&in.XR.Spec.StatefulSet.Spec.Template, cfg.PodSecurity, tpl); len(errs) > 0 {
		return invalid(in, prev, require, cfg, ReasonTemplateRejected, podtemplate.Rejected(tpl.String(), errs))
	}

	step := phased.Input{
		Now:                   now,
		Replicas:              r.Replicas,
		Check:                 in.XR.Spec.Check,
		StandardRollingUpdate: in.XR.Spec.StandardRollingUpdate,
		Previous:              &in.XR.Status.PhasedRolloutStatus,
	}
	if sts := in.StatefulSet; sts != nil {
		step.TemplateChanged = sts.GetAnnotations()[AnnotationTemplateHash] != r.TemplateHash
		step.Observed = phased.ObserveStatefulSet(sts, in.RolledPod)
	}
	if outcome != nil {
		step.CheckOutcome = &phased.Outcome{Succeeded: outcome.Succeeded, Err: outcome.Cause != "", Message: outcome.Message}
	}
	step.Recent = in.Recent
	d := phased.Step(step)
	// A Decision that still needs its check holds the partition and the
	// previous status, so the plan built from it is safe to write as it
	// is (the Secret is not fetched yet): it moves nothing.
	p := Plan{NeedCheck: d.Need == phased.NeedCheck && outcome == nil, Partition: d.Partition, Require: require, TTL: d.TTL}
	if p.TTL == 0 {
		p.TTL = cfg.StableTTL
	}
	if r, ok := phased.Remember(step, d); ok {
		p.Moved = &r
	}
	obj, err := r.Object(d.Partition)
	if err != nil {
		return invalid(in, prev, require, cfg, ReasonInvalidSpec, err.Error())
	}
	p.Ready = phased.Available(in.StatefulSet, r.Replicas)
	p.Resources = map[resource.Name]composite.Desired{ResourceName: {Object: obj, Ready: p.Ready}}
	// Crossplane calls again, within one reconcile, until the
	// requirements stop changing, so they follow only what is observed:
	// the pod at the StatefulSet's partition, the one a step checks.
	if sts := in.StatefulSet; sts != nil {
		if op, ok := phased.RolledPod(sts); ok {
			require[ReqRolledPod] = PodSelector(in.Claim.Namespace, phased.PodName(in.Claim.Name, op))
		}
	}

	p.Status = prev
	if d.Status != nil {
		p.Status.PhasedRolloutStatus = *d.Status
	}
	inEffect := !step.TemplateChanged && phased.Settled(in.StatefulSet, r.Replicas) &&
		(p.Status.Phase == v1alpha1.PhasedRolloutUpdated || p.Status.Phase == v1alpha1.PhasedRolloutSuspended)
	p.Status.ObservedGeneration = claimgen.Observed(prev.ObservedGeneration, in.ClaimGen, inEffect)
	changed := !reflect.DeepEqual(p.Status.PhasedRolloutStatus, prev.PhasedRolloutStatus) || p.Status.ObservedGeneration != prev.ObservedGeneration
	p.Status.LastReconciled = composite.LastReconciled(prev.LastReconciled, changed, in.Breaker, now)
	if in.Breaker.Open {
		p.TTL = min(p.TTL, composite.TTLWatchesDropped)
	}
	p.Condition = condition(in.StatefulSet, p.Status.PhasedRolloutStatus)
	for _, e := range d.Events {
		sev := composite.SeverityNormal
		if e.Type == phased.EventWarning {
			sev = composite.SeverityWarning
		}
		p.Results = append(p.Results, composite.Result{Severity: sev, Reason: e.Reason, Message: e.Message})
	}
	return p
}

// invalid is the plan for a spec that cannot be rendered. Nothing that
// exists is dropped for it: the StatefulSet stays as it is until the spec
// is fixed, and the condition says what to fix.
func invalid(in Inputs, prev Status, require map[string]*fnv1.ResourceSelector, cfg v1beta1.Resolved, reason, msg string) Plan {
	return Plan{
		Status:    prev,
		Resources: composite.KeepObserved(in.Observed),
		Condition: composite.Condition{Type: TypeUpdated, Status: metav1.ConditionFalse, Reason: reason, Message: msg},
		Require:   require,
		TTL:       cfg.StableTTL,
	}
}

// condition is the Updated condition for status.
func condition(sts *appsv1.StatefulSet, st v1alpha1.PhasedRolloutStatus) composite.Condition {
	if sts == nil {
		return composite.Condition{Type: TypeUpdated, Status: metav1.ConditionFalse, Reason: ReasonCreating, Message: "the StatefulSet is being created"}
	}
	return phased.Updated(sts, st)
}

// validate refuses what the API server would refuse of the StatefulSet
// with a message naming the claim's field, before anything is applied.
func validate(spec appsapi.PhasedStatefulSetSpec) error {
	s := spec.StatefulSet.Spec
	if s.Selector == nil || (len(s.Selector.MatchLabels) == 0 && len(s.Selector.MatchExpressions) == 0) {
		return errors.Errorf("spec.statefulSet.spec.selector: must select the pods by labels")
	}
	for k, v := range s.Selector.MatchLabels {
		if s.Template.Labels[k] != v {
			return errors.Errorf("spec.statefulSet.spec.template.metadata.labels: must carry %s=%s, which spec.statefulSet.spec.selector.matchLabels selects", k, v)
		}
	}
	for k := range spec.StatefulSet.Metadata.Annotations {
		if k == AnnotationTemplateHash {
			return errors.Errorf("spec.statefulSet.metadata.annotations: %s is set by the function", k)
		}
	}
	return nil
}
