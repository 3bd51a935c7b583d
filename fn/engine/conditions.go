package engine

import (
	"fmt"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
)

// Condition types. Crossplane reserves Ready and Synced, so the original's
// Ready condition is EngineReady here.
const (
	TypeEngineReady   = "EngineReady"
	TypeInstanceReady = "InstanceReady"
)

// TypeResponsive is Crossplane's own condition on a composite, which the
// function only reads (composite.BreakerOf).
const TypeResponsive = composite.TypeResponsive

// RenderingsVerified says whether status.renderings could be trusted. It
// is only reported once a recording has been rejected.
const (
	TypeRenderingsVerified   = "RenderingsVerified"
	ReasonRenderingsVerified = "RenderingsVerified"
	ReasonRecordingRejected  = "RecordingRejected"
)

// Condition reasons.
const (
	ReasonEngineReady            = "EngineReady"
	ReasonStopped                = "Stopped"
	ReasonRolling                = "Rolling"
	ReasonPodsNotReady           = "PodsNotReady"
	ReasonInitializing           = "Initializing"
	ReasonInstanceReady          = "InstanceReady"
	ReasonInstanceNotReady       = "InstanceNotReady"
	ReasonDrainCheckFailing      = "DrainCheckFailing"
	ReasonClassNotFound          = "FireboltEngineClassNotFound"
	ReasonTemplateRejected       = "TemplateRejected"
	ReasonResourceBoundsExceeded = "ResourceBoundsExceeded"
	ReasonLimitExceeded          = "LimitExceeded"
	ReasonClaimLabelsMissing     = composite.ReasonClaimLabelsMissing
	ReasonStatefulSetWarning     = "StatefulSetWarning"
	// ReasonWaitingForGateway: the next generation is ready, and the
	// routing Service waits for the gateway to trust its certificate or
	// to reach it in its protocol.
	ReasonWaitingForGateway = "WaitingForGateway"
)

// MaxMessageBytes bounds every condition message and event this function
// writes (composite.MaxMessageBytes).
const MaxMessageBytes = composite.MaxMessageBytes

// BoundMessage is composite.BoundMessage.
func BoundMessage(s string) string { return composite.BoundMessage(s) }

// readyFacts is what EngineReady is derived from, after the transition.
type readyFacts struct {
	Phase v1alpha1.EnginePhase
	// Initializing is the very first call.
	Initializing bool
	// Gated phases (stable, stopped, creating) consult the instance and the
	// class; the others proceed without them.
	Gated    bool
	Instance instanceState
	// ClassProblem is non-empty when the referenced class is missing or
	// unreadable.
	ClassProblem string
	Rejection    *rejection
	// DrainFailing is the drain check's failure message while draining.
	DrainFailing string
	DrainingGen  int
	// GatewayHold is why the routing Service waits for the gateway.
	GatewayHold string
	// Current is the generation being rolled out, or served when at rest.
	Current int
	// Active is the active generation and its pods.
	Active     int
	ActivePods podsState
	// Warning is the current StatefulSet's latest Warning event, only when
	// its generation is stuck short of pods.
	Warning *StatefulSetWarning
	// AutoStopped is why auto-stop holds the engine at zero; "" when it
	// does not (disabled, or spec.replicas is what is zero).
	AutoStopped string
	// AdoptionFailed says why a migrated claim's generation cannot be
	// adopted.
	AdoptionFailed string
}

// engineReady derives EngineReady with the seed's precedence:
// InstanceNotReady > Stopped > Rolling > PodsNotReady > EngineReady. The
// refinements sit where the original put them: a missing class and a
// rejected template stop rendering, so they rank just below the instance;
// DrainCheckFailing names why draining does not progress; a StatefulSet
// Warning event only ever replaces the generic Rolling or PodsNotReady.
func engineReady(f readyFacts) Condition {
	c := func(reason, msg string) Condition {
		return Condition{Type: TypeEngineReady, Status: metav1.ConditionFalse, Reason: reason, Message: BoundMessage(msg)}
	}
	switch {
	case f.Gated && !f.Instance.Ready:
		return c(ReasonInstanceNotReady, f.Instance.Message)
	case f.Gated && f.ClassProblem != "":
		return c(ReasonClassNotFound, f.ClassProblem)
	case f.AdoptionFailed != "":
		return c(ReasonAdoptionFailed, f.AdoptionFailed)
	case f.DrainFailing != "":
		return c(ReasonDrainCheckFailing, fmt.Sprintf("drain check of generation %d is failing: %s", f.DrainingGen, f.DrainFailing))
	case f.Rejection != nil:
		return c(f.Rejection.Reason, f.Rejection.Message)
	case f.Phase == v1alpha1.EnginePhaseStopped && f.AutoStopped != "":
		return c(ReasonAutoStopped, "Engine is stopped by auto-stop ("+f.AutoStopped+"); a query through the gateway, or the "+
			autostop.WakeAnnotation+" annotation on the claim, wakes it")
	case f.Phase == v1alpha1.EnginePhaseStopped:
		return c(ReasonStopped, "Engine is stopped (spec.replicas is 0)")
	case f.Initializing:
		return c(ReasonInitializing, "Engine is initializing")
	case f.Phase == v1alpha1.EnginePhaseUpdating:
		return c(ReasonRolling, fmt.Sprintf("Engine is updating generation %d in place, one pod at a time", f.Active))
	case f.Phase != v1alpha1.EnginePhaseStable:
		if f.Warning != nil {
			return c(f.Warning.reason(), f.Warning.message())
		}
		if f.GatewayHold != "" {
			return c(ReasonWaitingForGateway, f.GatewayHold)
		}
		// The message names the generation, not the phase: status.phase
		// has the step, and a message that changed with every step would be
		// one more write of the composite (one more watch event against
		// Crossplane's circuit breaker) at every step of every rollout.
		return c(ReasonRolling, fmt.Sprintf("Engine is rolling out generation %d", f.Current))
	case !f.ActivePods.Ready:
		if f.Warning != nil {
			return c(f.Warning.reason(), f.Warning.message())
		}
		return c(ReasonPodsNotReady, fmt.Sprintf("generation %d has %d of %d pod(s) ready", f.Active, f.ActivePods.ReadyReplicas, f.ActivePods.Desired))
	}
	return Condition{Type: TypeEngineReady, Status: metav1.ConditionTrue, Reason: ReasonEngineReady,
		Message: fmt.Sprintf("serving traffic on generation %d", f.Active)}
}

// instanceReady is the InstanceReady condition.
func instanceReady(s instanceState) Condition {
	msg := BoundMessage(s.Message)
	switch {
	case s.Ready:
		return Condition{Type: TypeInstanceReady, Status: metav1.ConditionTrue, Reason: ReasonInstanceReady, Message: msg}
	case s.Waiting:
		return Condition{Type: TypeInstanceReady, Status: metav1.ConditionUnknown, Reason: ReasonInstanceNotReady, Message: msg}
	}
	return Condition{Type: TypeInstanceReady, Status: metav1.ConditionFalse, Reason: ReasonInstanceNotReady, Message: msg}
}

// StatefulSetWarning is the most recent Warning event of a StatefulSet.
type StatefulSetWarning struct {
	StatefulSet string
	Reason      string
	Message     string
	Count       int32
}

// reason is the event's reason as a condition reason: letters and digits
// only, starting with a letter; else the generic StatefulSetWarning.
func (w StatefulSetWarning) reason() string {
	var b strings.Builder
	for _, r := range w.Reason {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" || !unicode.IsLetter(rune(s[0])) {
		return ReasonStatefulSetWarning
	}
	return s
}

func (w StatefulSetWarning) message() string {
	n := w.Count
	if n < 1 {
		n = 1
	}
	return fmt.Sprintf("StatefulSet %s: %s (x%d)", w.StatefulSet, strings.TrimSpace(w.Message), n)
}
