package autostop

import "time"

// Reason is the token in status.autoStop.reason, the original's spelling.
type Reason string

// Reasons, in the order of the precedence that picks them (reference §3.2).
const (
	ReasonDisabled         Reason = "Disabled"
	ReasonWakeRequested    Reason = "WakeRequested"
	ReasonScheduleActive   Reason = "ScheduleActive"
	ReasonStopped          Reason = "Stopped"
	ReasonScrapeFailed     Reason = "ScrapeFailed"
	ReasonActivityObserved Reason = "ActivityObserved"
	ReasonInitializing     Reason = "Initializing"
	ReasonIdle             Reason = "Idle"
)

// Reasons is every Reason, a closed set (metric labels are drawn from it).
var Reasons = []Reason{
	ReasonDisabled, ReasonWakeRequested, ReasonScheduleActive, ReasonStopped,
	ReasonScrapeFailed, ReasonActivityObserved, ReasonInitializing, ReasonIdle,
}

// fromSample reports whether r was decided by an activity sample (rows 5 to
// 9), the reasons a call without a sample carries over.
func (r Reason) fromSample() bool {
	switch r {
	case ReasonScrapeFailed, ReasonActivityObserved, ReasonInitializing, ReasonIdle:
		return true
	case ReasonDisabled, ReasonWakeRequested, ReasonScheduleActive, ReasonStopped:
		return false
	}
	return false
}

// Status is status.autoStop. Times are whole seconds in UTC, as the status
// stores them, so a decision read back from status compares equal and an
// unchanged decision never causes a status write.
type Status struct {
	// Replicas is the effective replica count the composer composes; nil
	// before the first decision.
	Replicas *int32
	// Reason says which rule decided.
	Reason Reason
	// LastActivityTime is the last sample with activity, or the anchor of
	// the idle clock; nil while auto-stop is disabled.
	LastActivityTime *time.Time
	// LastScaledAt is when auto-stop last changed Replicas; kept while
	// disabled, as history.
	LastScaledAt *time.Time
}
