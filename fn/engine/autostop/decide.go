package autostop

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Input is everything one decision reads. The caller reads it; Decide does
// no I/O and reads no clock.
type Input struct {
	// Spec is the effective autoStop (see Resolve); nil when neither the
	// engine nor its class has one.
	Spec *v1alpha1.AutoStopSpec
	// Field is where Spec was read, for error messages; spec.autoStop when
	// nil.
	Field *field.Path
	// SpecReplicas is the claim's spec.replicas: the effective count while
	// auto-stop is disabled, and the count auto-stop starts from when it is
	// enabled.
	SpecReplicas int32
	// Previous is the status.autoStop the last decision wrote.
	Previous Status
	// WakeStamp is the value of the WakeAnnotation on the claim, "" when
	// absent.
	WakeStamp string
	// Activity is this call's sample.
	Activity Sample
	// Phase is the engine's phase before this call.
	Phase v1alpha1.EnginePhase
	// Now is the time of the call.
	Now time.Time
}

// Decision is the new status.autoStop and when to decide again.
type Decision struct {
	Status Status
	// Scaled says this decision changed the effective count.
	Scaled bool
	// RequeueAfter is pollInterval while auto-stop is deciding; 0 when it
	// has no opinion (disabled, or waiting for a rollout to finish).
	RequeueAfter time.Duration
	// Message says more than the reason: an ignored wake stamp, why a
	// scrape failed, what the engine waits for. It stays the same between
	// calls that decide the same, so it can go on a condition without
	// causing a status write per call.
	Message string
}

// Decide is the auto-stop decision. The rules apply top-down, first match
// wins, exactly as the original operator's (reference §3.2):
//
//  1. disabled or unset: the claim's spec.replicas, Disabled, the idle
//     clock cleared (lastScaledAt is kept, as history);
//  2. a wake stamp younger than WakeTTL on an engine at zero, or one the
//     rows below would leave at zero: activeReplicas, WakeRequested, the
//     idle clock anchored now. Above the zero check on purpose: an
//     auto-stopped engine is at zero. On an engine the rows below keep
//     running the stamp changes neither the count nor the reason (see
//     wakes);
//  3. a schedule window active: activeReplicas, ScheduleActive;
//  4. at zero: no change, Stopped;
//  5. the scrape failed: no change, ScrapeFailed, the idle clock refreshed
//     (a failure never counts as idle);
//  6. queries running or suspended: no change, ActivityObserved, the idle
//     clock refreshed;
//  7. no idle clock yet: no change, Initializing, the clock anchored now;
//  8. idle for idleTimeout and above idleReplicas: idleReplicas, Idle;
//  9. otherwise no change, ActivityObserved, the clock unchanged.
//
// Only in the stable and stopped phases, as the original's runner: scaling
// in the middle of a rollout would fight the blue-green flow. In any other
// phase the previous status is kept. A call without a sample (see
// NotSampled) cannot tell activity from quiet: below row 4 it anchors a
// missing idle clock (row 7), otherwise keeps the previous sample's reason
// and clock (ActivityObserved when the previous reason came from another
// row), and never idles.
//
// The error is an invalid spec that admission would have refused.
func Decide(in Input) (Decision, error) {
	if !Enabled(in.Spec) {
		return Decision{Status: Status{
			Replicas:     ptrTo(in.SpecReplicas),
			Reason:       ReasonDisabled,
			LastScaledAt: in.Previous.LastScaledAt,
		}}, nil
	}
	fld := in.Field
	if fld == nil {
		fld = field.NewPath("spec", "autoStop")
	}
	p, err := newParams(fld, in.Spec)
	if err != nil {
		return Decision{}, err
	}

	current := Current(in.SpecReplicas, in.Previous)
	next := in.Previous
	next.Replicas = ptrTo(current)

	if in.Phase != v1alpha1.EnginePhaseStable && in.Phase != v1alpha1.EnginePhaseStopped {
		return Decision{
			Status:  next,
			Message: fmt.Sprintf("auto-stop waits for the engine to be stable or stopped (phase %q)", in.Phase),
		}, nil
	}

	// Stamped times are whole seconds in UTC, what status keeps.
	now := in.Now.UTC().Truncate(time.Second)
	wake := readStamp(in.WakeStamp, in.Now)
	var notes []string
	if wake.message != "" && wake.state != stampFresh {
		notes = append(notes, wake.message)
	}
	target := current
	switch {
	case p.schedule.Active(in.Now):
		next.Reason, target = ReasonScheduleActive, p.active
	case current == 0:
		next.Reason = ReasonStopped
	case in.Activity.kind == failed:
		next.Reason, next.LastActivityTime = ReasonScrapeFailed, &now
		notes = append(notes, "the activity scrape failed, which never counts as idle: "+clip(in.Activity.failure))
	case in.Activity.kind == observed && in.Activity.queries > 0:
		next.Reason, next.LastActivityTime = ReasonActivityObserved, &now
	case in.Previous.LastActivityTime == nil:
		next.Reason, next.LastActivityTime = ReasonInitializing, &now
	case in.Activity.kind == notSampled:
		if !in.Previous.Reason.fromSample() {
			next.Reason = ReasonActivityObserved
		}
	case in.Now.Sub(*in.Previous.LastActivityTime) >= p.idleTimeout && current > p.idle:
		next.Reason, target = ReasonIdle, p.idle
		notes = append(notes, fmt.Sprintf("no query running or suspended for %s", p.idleTimeout))
	default:
		next.Reason = ReasonActivityObserved
	}

	if wake.state == stampFresh {
		if wakes(current, target) {
			next.Reason, target, next.LastActivityTime = ReasonWakeRequested, p.active, &now
			notes = []string{wake.message}
		} else {
			notes = append(notes, fmt.Sprintf("ignored the wake stamp %s: the engine runs %d replica(s), and a stamp wakes only a stopped engine", WakeAnnotation, target))
		}
	}

	d := Decision{RequeueAfter: p.pollInterval, Message: strings.Join(notes, "; ")}
	if target != current {
		next.Replicas, next.LastScaledAt, d.Scaled = ptrTo(target), &now, true
	}
	d.Status = next
	return d, nil
}

// wakes says whether a fresh wake stamp decides: only for an engine at zero
// (auto-stopped, or zeroed by hand) or one this decision would stop. The
// original's poller passes demand on only for engines at zero replicas, so
// a running engine whose endpoints are briefly gone (an outage, a rollout)
// is never resized by it. The woken engine's idle clock starts at the wake:
// the demand that woke it is activity, and an old clock would idle it again
// on its first quiet sample.
func wakes(current, target int32) bool { return current == 0 || target == 0 }

func ptrTo[T any](v T) *T { return &v }

// Current is the replica count an enabled auto-stop starts a decision
// from. Auto-stop owns the count once it has decided one; until then (never
// enabled, or disabled until now) it starts from the claim's spec.replicas,
// which the same edit that enabled it may have changed. A count out of
// range was not written by Decide and is not trusted.
func Current(specReplicas int32, prev Status) int32 {
	if r := prev.Replicas; r != nil && *r >= 0 && *r <= v1alpha1.MaxEngineReplicas &&
		prev.Reason != "" && prev.Reason != ReasonDisabled {
		return *r
	}
	return specReplicas
}

// Enabled reports whether s turns auto-stop on.
func Enabled(s *v1alpha1.AutoStopSpec) bool { return s != nil && s.Enabled }

// Validate checks an enabled autoStop at fld as Decide does, for a caller
// that must refuse it before deciding anything; nil for a disabled one.
func Validate(fld *field.Path, s *v1alpha1.AutoStopSpec) error {
	if !Enabled(s) {
		return nil
	}
	_, err := newParams(fld, s)
	return err
}
