package engine

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// TypeAutoStop is the condition that says what auto-stop decided and why,
// on engines that have or had auto-stop enabled.
const TypeAutoStop = "AutoStop"

// autoStopTexts say what each reason means, for a decision that came with
// no message of its own.
var autoStopTexts = map[string]string{
	string(autostop.ReasonDisabled):         "auto-stop is disabled: the engine runs spec.replicas",
	string(autostop.ReasonWakeRequested):    "a wake was requested",
	string(autostop.ReasonScheduleActive):   "a schedule window is open: the engine runs activeReplicas",
	string(autostop.ReasonStopped):          "the engine is at zero replicas; a wake stamp or a schedule window starts it",
	string(autostop.ReasonScrapeFailed):     "the activity scrape failed, which never counts as idle",
	string(autostop.ReasonActivityObserved): "the engine is not idle for idleTimeout yet",
	string(autostop.ReasonInitializing):     "the idle clock starts now",
	string(autostop.ReasonIdle):             "the engine was idle for idleTimeout",
}

// autoStopCondition is the AutoStop condition: True with the decision's
// reason while auto-stop is enabled, False once it was disabled; none on an
// engine that never enabled it.
func autoStopCondition(c autoStopCall) (Condition, bool) {
	if c.status == nil {
		return Condition{}, false
	}
	msg := c.message
	if msg == "" {
		msg = autoStopTexts[c.status.Reason]
	}
	status := metav1.ConditionTrue
	if !c.enabled {
		status = metav1.ConditionFalse
	}
	reason := c.status.Reason
	if autoStopTexts[reason] == "" {
		// A kept status this function did not write.
		reason = "Unknown"
	}
	return Condition{Type: TypeAutoStop, Status: status, Reason: reason, Message: BoundMessage(msg)}, true
}

// ReasonAutoStopped is EngineReady's reason for an engine auto-stop has
// stopped: not broken, and woken by demand (Argo CD reads it as Suspended).
const ReasonAutoStopped = "AutoStopped"

// autoStopField is where an autoStop is read, on the engine or its class.
var autoStopField = field.NewPath("spec", "autoStop")

// autoStopSpec is the autoStop that applies to the engine (whole-struct
// fallback to the class's) and the class it came from, "" for the
// engine's own.
func autoStopSpec(in Inputs) (*v1alpha1.AutoStopSpec, string) {
	if in.Spec.AutoStop != nil {
		return in.Spec.AutoStop, ""
	}
	if c := in.classSpec(); c != nil && c.AutoStop != nil {
		return c.AutoStop, in.Class.Name
	}
	return nil, ""
}

// validateAutoStop refuses an enabled autoStop that admission would have
// refused (a composite created without its claim, or a class published
// before this check existed), naming the object and the field.
func validateAutoStop(in Inputs) *rejection {
	s, class := autoStopSpec(in)
	err := autostop.Validate(autoStopField, s)
	if err == nil {
		return nil
	}
	msg := err.Error()
	if class != "" {
		msg = fmt.Sprintf("FireboltEngineClass %s: %s", class, msg)
	}
	return &rejection{Reason: ReasonLimitExceeded, Message: msg}
}

// autoStopCall is auto-stop's part of one call.
type autoStopCall struct {
	// replicas is the count the engine composes.
	replicas int32
	// status is the next status.autoStop: nil for an engine that has
	// never had auto-stop on, so that it costs nothing until used.
	status *v1alpha1.AutoStopStatus
	// ttl is when auto-stop wants to decide again; 0 for no opinion.
	ttl time.Duration
	// enabled: an enabled autoStop applies.
	enabled bool
	// message says more than the reason (an ignored wake stamp, a failed
	// scrape); stable between calls that decide the same.
	message string
	// scaled: this call changed the count.
	scaled bool
	// decided: an enabled auto-stop decided on this call (in stable or
	// stopped); otherwise it kept its last decision.
	decided bool
}

// decideAutoStop runs auto-stop's decision (autostop.Decide) on this call's
// inputs and sample. An autoStop that cannot be decided (refused by
// validateAutoStop, which the machine reports) keeps the last effective
// count.
func decideAutoStop(in Inputs, sig Signals, now time.Time) autoStopCall {
	s, _ := autoStopSpec(in)
	prev := autoStopStatusOf(in.Status.AutoStop)
	d, err := autostop.Decide(autostop.Input{
		Spec:         s,
		Field:        autoStopField,
		SpecReplicas: in.Spec.Replicas,
		Previous:     prev,
		WakeStamp:    in.WakeStamp,
		Activity:     sig.Activity,
		Phase:        in.Status.Phase,
		Now:          now,
	})
	if err != nil {
		return autoStopCall{replicas: autostop.Current(in.Spec.Replicas, prev), status: in.Status.AutoStop, enabled: true}
	}
	c := autoStopCall{
		replicas: *d.Status.Replicas,
		ttl:      d.RequeueAfter,
		enabled:  autostop.Enabled(s),
		message:  d.Message,
		scaled:   d.Scaled,
		decided:  d.RequeueAfter > 0,
	}
	if c.enabled || in.Status.AutoStop != nil {
		c.status = autoStopStatusFor(d.Status)
	}
	return c
}

// dueActivitySample says whether this call samples the engine's activity,
// and of which generation: only with auto-stop enabled, in stable or
// stopped, while auto-stop's count is above zero (at zero there is nothing
// to sample; rows 2 to 4 decide without one). Without an active generation
// the sample is a failure (gen < 0), as in the original.
func dueActivitySample(in Inputs) (gen int, due bool) {
	s, _ := autoStopSpec(in)
	if !autostop.Enabled(s) || autostop.Validate(autoStopField, s) != nil || in.Namespace == "" {
		return 0, false
	}
	if in.Status.Phase != v1alpha1.EnginePhaseStable && in.Status.Phase != v1alpha1.EnginePhaseStopped {
		return 0, false
	}
	if autostop.Current(in.Spec.Replicas, autoStopStatusOf(in.Status.AutoStop)) == 0 {
		return 0, false
	}
	return in.Status.ActiveGeneration, true
}

// activitySample sums running and suspended queries over the Running pods
// of an observation. Any error, or no Running pod, is a failure: a failure
// never counts as idle.
func activitySample(o scrape.Observation) autostop.Sample {
	if o.Err != nil {
		return autostop.Failed(o.Err.Error())
	}
	if len(o.Pods) == 0 {
		return autostop.Failed("no Running pod of the active generation to scrape")
	}
	var sum float64
	for _, p := range o.Pods {
		if p.Err != nil {
			return autostop.Failed("pod " + p.Pod + ": " + p.Err.Error())
		}
		sum += p.Running + p.Suspended
	}
	if sum > 0 && sum < 1 {
		// A fraction of a query is still activity.
		sum = 1
	}
	return autostop.Observed(int64(min(sum, float64(1<<62))))
}

// autoStopStatusOf reads status.autoStop as the decision's Status.
func autoStopStatusOf(s *v1alpha1.AutoStopStatus) autostop.Status {
	if s == nil {
		return autostop.Status{}
	}
	out := autostop.Status{Replicas: s.Replicas, Reason: autostop.Reason(s.Reason)}
	if s.LastActivityTime != nil {
		t := s.LastActivityTime.UTC()
		out.LastActivityTime = &t
	}
	if s.LastScaledAt != nil {
		t := s.LastScaledAt.UTC()
		out.LastScaledAt = &t
	}
	return out
}

// autoStopStatusFor is the decision's Status as status.autoStop.
func autoStopStatusFor(s autostop.Status) *v1alpha1.AutoStopStatus {
	out := &v1alpha1.AutoStopStatus{Replicas: s.Replicas, Reason: string(s.Reason)}
	if s.LastActivityTime != nil {
		out.LastActivityTime = &metav1.Time{Time: *s.LastActivityTime}
	}
	if s.LastScaledAt != nil {
		out.LastScaledAt = &metav1.Time{Time: *s.LastScaledAt}
	}
	return out
}
