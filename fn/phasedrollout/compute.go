package phasedrollout

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	stsplus "github.com/firebolt-db/firebolt-crossplane/apis/stsplus/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

// Reasons of the Updated condition (phased.Updated) when nothing is
// composed.
const (
	ReasonWaitingForTarget = "WaitingForTarget"
	ReasonTargetNotFound   = "TargetNotFound"
	ReasonOnDelete         = "OnDeleteStrategy"
	ReasonManagedElsewhere = "ManagedByAnotherPhasedRollout"
	ReasonInvalidSpec      = "InvalidSpec"
)

// TypePartitionManaged says whether this claim alone sets the target's
// partition, through an Object provider-kubernetes has applied.
const TypePartitionManaged = "PartitionManaged"

// Reasons of the PartitionManaged condition.
const (
	ReasonManaged            = "Managed"
	ReasonConflictingManager = "ConflictingFieldManager"
	ReasonApplyFailed        = "ApplyFailed"
	ReasonPending            = "Pending"
	ReasonNotComposed        = "NotComposed"
)

// conflictMemory is how long a conflict seen once stays on the claim;
// maxObjectMessage bounds what provider-kubernetes says that is repeated.
const (
	conflictMemory   = 10 * time.Minute
	maxObjectMessage = 512
)

// Status is the composite's status as this composer owns it.
type Status struct {
	v1alpha1.PhasedRolloutStatus `json:",inline"`
	ObservedGeneration           int64                      `json:"observedGeneration"`
	PartitionConflict            *stsplus.PartitionConflict `json:"partitionConflict,omitempty"`
	LastReconciled               *metav1.Time               `json:"lastReconciled,omitempty"`
}

// Plan is what one call decides.
type Plan struct {
	// NeedCheck: the check is due and was not run. The rest holds
	// everything as it is, and is written only when the check cannot run
	// yet.
	NeedCheck bool

	Status     Status
	Partition  int32
	Resources  map[resource.Name]composite.Desired
	Ready      bool
	Conditions []composite.Condition
	Results    []composite.Result
	Require    map[string]*fnv1.ResourceSelector
	TTL        time.Duration
	// Moved is what the function remembers of this call's move of the
	// partition, if it made one (phased.Remember).
	Moved *phased.Recent
}

// Compute decides the Object and the status from in at now; outcome is the
// check run for this call, if one was.
func Compute(in Inputs, cfg v1beta1.Resolved, now time.Time, outcome *promcheck.Outcome) Plan {
	prev := Status{PhasedRolloutStatus: in.XR.Status.PhasedRolloutStatus, ObservedGeneration: in.XR.Status.ObservedGeneration,
		PartitionConflict: in.XR.Status.PartitionConflict, LastReconciled: in.XR.Status.LastReconciled}
	if !in.Claim.Known() {
		return Plan{
			Status:     prev,
			Resources:  composite.KeepObserved(in.Observed),
			Conditions: []composite.Condition{composite.ClaimLabelsMissing(phased.TypeUpdated, in.XR.GetName(), "phased rollouts", v1alpha1.PhasedRolloutKind)},
			TTL:        cfg.StableTTL,
		}
	}
	ns, target := in.Claim.Namespace, in.XR.Spec.TargetRef
	require := map[string]*fnv1.ResourceSelector{
		claimgen.Requirement: claimgen.Selector(stsplus.SchemeGroupVersion.String(), v1alpha1.PhasedRolloutKind, in.Claim.Name, ns),
	}
	if ref := in.XR.Spec.Check.Query.SecretRef; ref != "" {
		require[ReqSecret] = composite.Select("v1", "Secret", ns, ref)
	}
	if errs := validation.IsDNS1123Subdomain(target); len(errs) > 0 {
		return hold(in, prev, require, cfg, now, ReasonInvalidSpec,
			fmt.Sprintf("spec.targetRef %q: %s", target, strings.Join(errs, "; ")))
	}
	require[ReqTarget] = composite.Select("apps/v1", "StatefulSet", ns, target)
	name := in.XR.GetName()
	switch sts := in.Target; {
	case !in.TargetResolved:
		return hold(in, prev, require, cfg, now, ReasonWaitingForTarget, "waiting for Crossplane to fetch StatefulSet "+ns+"/"+target)
	case sts == nil:
		return none(in, prev, require, cfg, now, ReasonTargetNotFound,
			fmt.Sprintf("StatefulSet %s/%s not found: nothing is composed until it exists (fix spec.targetRef if it names the wrong one)", ns, target))
	case sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType:
		return none(in, prev, require, cfg, now, ReasonOnDelete,
			fmt.Sprintf("StatefulSet %s/%s has updateStrategy.type OnDelete, which ignores the rolling-update partition a phased rollout moves: it is left alone until its type is RollingUpdate", ns, target))
	case in.Marked.Name != "":
		require[ReqMarked] = composite.Select(stsplus.SchemeGroupVersion.String(), v1alpha1.PhasedRolloutKind, ns, in.Marked.Name)
		switch {
		case !in.Marked.Resolved:
			return hold(in, prev, require, cfg, now, ReasonWaitingForTarget,
				fmt.Sprintf("waiting for Crossplane to fetch PhasedRollout %s/%s, which StatefulSet %s's %s annotation names", ns, in.Marked.Name, target, stsplus.AnnotationManagedBy))
		case in.Marked.Found && in.Marked.TargetRef == target:
			return none(in, prev, require, cfg, now, ReasonManagedElsewhere,
				fmt.Sprintf("StatefulSet %s/%s is managed by PhasedRollout %s (annotation %s): delete one of the two claims", ns, target, in.Marked.Name, stsplus.AnnotationManagedBy))
		}
	}
	return roll(in, prev, require, cfg, now, outcome, name)
}

// roll runs a step of the rollout on the target and composes the Object
// that sets the partition it decides.
func roll(in Inputs, prev Status, require map[string]*fnv1.ResourceSelector, cfg v1beta1.Resolved, now time.Time, outcome *promcheck.Outcome, name string) Plan {
	sts, ns, target := in.Target, in.Claim.Namespace, in.XR.Spec.TargetRef
	replicas := phased.SpecReplicas(sts)
	step := phased.Input{
		Now:                   now,
		Replicas:              replicas,
		Check:                 in.XR.Spec.Check,
		StandardRollingUpdate: in.XR.Spec.StandardRollingUpdate,
		Previous:              &in.XR.Status.PhasedRolloutStatus,
		Observed:              phased.ObserveStatefulSet(sts, in.RolledPod),
	}
	if outcome != nil {
		step.CheckOutcome = &phased.Outcome{Succeeded: outcome.Succeeded, Err: outcome.Cause != "", Message: outcome.Message}
	}
	step.Recent = in.Recent
	d := phased.Step(step)
	// A Decision that still needs its check holds the partition and the
	// previous status, so the plan built from it is safe to write as it is
	// (the Secret is not fetched yet): it moves nothing.
	p := Plan{NeedCheck: d.Need == phased.NeedCheck && outcome == nil, Partition: d.Partition, Require: require, TTL: d.TTL}
	if p.TTL == 0 {
		p.TTL = cfg.StableTTL
	}
	if r, ok := phased.Remember(step, d); ok {
		p.Moved = &r
	}
	p.Ready = phased.Available(sts, replicas)
	p.Resources = map[resource.Name]composite.Desired{
		ResourceName: {Object: renderObject(name, cfg.KubernetesProviderConfig, in.Claim.Name, ns, target, d.Partition), Ready: p.Ready},
	}
	if op, ok := phased.RolledPod(sts); ok {
		require[ReqRolledPod] = composite.Select("v1", "Pod", ns, phased.PodName(target, op))
	}

	p.Status = prev
	if d.Status != nil {
		p.Status.PhasedRolloutStatus = *d.Status
	}
	applied := false
	if cur, ok := phased.Partition(sts); ok {
		applied = cur == d.Partition
	}
	inEffect := applied && phased.Settled(sts, replicas) &&
		(p.Status.Phase == v1alpha1.PhasedRolloutUpdated || p.Status.Phase == v1alpha1.PhasedRolloutSuspended)
	p.Status.ObservedGeneration = claimgen.Observed(prev.ObservedGeneration, in.ClaimGen, inEffect)

	writers := partitionWriters(sts.GetManagedFields(), FieldManager(name))
	p.Status.PartitionConflict = remember(prev.PartitionConflict, writers, now)
	managed := partitionManaged(in, p.Status.PartitionConflict, name)
	if c := p.Status.PartitionConflict; c != nil {
		if len(writers) > 0 && (prev.PartitionConflict == nil || !slices.Equal(prev.PartitionConflict.Managers, writers)) {
			p.Results = append(p.Results, composite.Result{Severity: composite.SeverityWarning, Reason: ReasonConflictingManager, Message: managed.Message})
		}
		if left := conflictMemory - now.Sub(seen(c)); left > 0 {
			p.TTL = min(p.TTL, left+time.Second)
		}
	}
	p.Conditions = []composite.Condition{phased.Updated(sts, p.Status.PhasedRolloutStatus), managed}
	for _, e := range d.Events {
		sev := composite.SeverityNormal
		if e.Type == phased.EventWarning {
			sev = composite.SeverityWarning
		}
		p.Results = append(p.Results, composite.Result{Severity: sev, Reason: e.Reason, Message: e.Message})
	}
	return finish(p, prev, in, now)
}

// remember is the PartitionConflict to keep: the writers seen now, else the
// last ones seen for conflictMemory. provider-kubernetes takes a forced
// partition back on its next poll, so a conflict is often seen once: it
// stays on the claim long enough for someone to read it.
func remember(prev *stsplus.PartitionConflict, writers []string, now time.Time) *stsplus.PartitionConflict {
	if len(writers) > 0 {
		return &stsplus.PartitionConflict{Managers: writers, LastSeenTime: now.UTC().Format(time.RFC3339)}
	}
	if prev == nil || len(prev.Managers) == 0 || now.Sub(seen(prev)) >= conflictMemory {
		return nil
	}
	c := *prev
	c.Managers = slices.Clone(prev.Managers)
	if len(c.Managers) > maxManagersReported {
		c.Managers = c.Managers[:maxManagersReported]
	}
	for i, m := range c.Managers {
		c.Managers[i] = clip(m, maxManagerName)
	}
	return &c
}

// seen is when a conflict was last seen; the zero time when the status
// holds no time this function wrote, which lets it expire.
func seen(c *stsplus.PartitionConflict) time.Time {
	t, err := time.Parse(time.RFC3339, c.LastSeenTime)
	if err != nil {
		return time.Time{}
	}
	return t
}

// partitionManaged is the PartitionManaged condition: a conflict first,
// then what provider-kubernetes says of the Object.
func partitionManaged(in Inputs, conflict *stsplus.PartitionConflict, name string) composite.Condition {
	c := composite.Condition{Type: TypePartitionManaged, Status: metav1.ConditionFalse}
	target := in.Claim.Namespace + "/" + in.XR.Spec.TargetRef
	if conflict != nil {
		c.Reason = ReasonConflictingManager
		c.Message = fmt.Sprintf("field manager %s also set spec.updateStrategy.rollingUpdate.partition of StatefulSet %s (last seen %s), "+
			"which %s sets for this claim: the two overwrite each other and pods may roll unchecked; remove the partition from what %s applies",
			quoted(conflict.Managers), target, conflict.LastSeenTime, FieldManager(name), quoted(conflict.Managers))
		return c
	}
	synced := objectCondition(in, "Synced")
	switch {
	case synced == nil || synced.Status == metav1.ConditionUnknown:
		c.Reason, c.Message = ReasonPending, fmt.Sprintf("waiting for provider-kubernetes to apply the partition of StatefulSet %s (Object %s)", target, name)
	case synced.Status != metav1.ConditionTrue:
		c.Reason = ReasonApplyFailed
		c.Message = fmt.Sprintf("provider-kubernetes cannot apply the partition of StatefulSet %s (Object %s): %s", target, name, clipMessage(synced.Message))
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonManaged
		c.Message = fmt.Sprintf("%s alone sets the partition of StatefulSet %s", FieldManager(name), target)
	}
	return c
}

// objectCondition is the observed Object's condition of type t.
func objectCondition(in Inputs, t string) *composite.Condition {
	o := in.Observed[ResourceName]
	if o == nil {
		return nil
	}
	return composite.ConditionOf(o.UnstructuredContent(), t)
}

// hold keeps everything as it is while something is not known yet: the
// Object as observed, the status as it was.
func hold(in Inputs, prev Status, require map[string]*fnv1.ResourceSelector, cfg v1beta1.Resolved, now time.Time, reason, msg string) Plan {
	p := Plan{Status: prev, Resources: composite.KeepObserved(in.Observed), Require: require, TTL: cfg.StableTTL}
	p.Conditions = []composite.Condition{
		{Type: phased.TypeUpdated, Status: metav1.ConditionFalse, Reason: reason, Message: msg},
		partitionManaged(in, prev.PartitionConflict, in.XR.GetName()),
	}
	return finish(p, prev, in, now)
}

// none composes nothing: the Object goes (deleting it leaves the target as
// it is, Observe and Update being all it may do), and the condition says
// why, with a Warning when that is new.
func none(in Inputs, prev Status, require map[string]*fnv1.ResourceSelector, cfg v1beta1.Resolved, now time.Time, reason, msg string) Plan {
	p := Plan{Status: prev, Resources: map[resource.Name]composite.Desired{}, Require: require, TTL: cfg.StableTTL}
	p.Status.PartitionConflict = remember(prev.PartitionConflict, nil, now)
	p.Conditions = []composite.Condition{
		{Type: phased.TypeUpdated, Status: metav1.ConditionFalse, Reason: reason, Message: msg},
		{Type: TypePartitionManaged, Status: metav1.ConditionFalse, Reason: ReasonNotComposed, Message: "no Object is composed: " + msg},
	}
	if c, ok := in.Conditions[phased.TypeUpdated]; !ok || c.Reason != reason {
		p.Results = append(p.Results, composite.Result{Severity: composite.SeverityWarning, Reason: reason, Message: msg})
	}
	return finish(p, prev, in, now)
}

// finish bounds every message, stamps lastReconciled when the status
// changed, and shortens the TTL while Crossplane's breaker is open.
func finish(p Plan, prev Status, in Inputs, now time.Time) Plan {
	changed := !reflect.DeepEqual(p.Status.PhasedRolloutStatus, prev.PhasedRolloutStatus) ||
		p.Status.ObservedGeneration != prev.ObservedGeneration || !reflect.DeepEqual(p.Status.PartitionConflict, prev.PartitionConflict)
	p.Status.LastReconciled = composite.LastReconciled(prev.LastReconciled, changed, in.Breaker, now)
	if in.Breaker.Open {
		p.TTL = min(p.TTL, composite.TTLWatchesDropped)
	}
	for i := range p.Conditions {
		p.Conditions[i].Message = composite.BoundMessage(p.Conditions[i].Message)
	}
	for i := range p.Results {
		p.Results[i].Message = composite.BoundMessage(p.Results[i].Message)
	}
	return p
}

// quoted lists field managers as they appear in managedFields.
func quoted(ms []string) string {
	q := make([]string, len(ms))
	for i, m := range ms {
		q[i] = fmt.Sprintf("%q", m)
	}
	return strings.Join(q, ", ")
}

// clipMessage bounds a message provider-kubernetes wrote.
func clipMessage(s string) string {
	if len(s) <= maxObjectMessage {
		return s
	}
	return clip(s, maxObjectMessage) + "…"
}
