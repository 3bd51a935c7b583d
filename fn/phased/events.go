package phased

import "fmt"

// EventType is the type of a Kubernetes event.
type EventType string

// Event types.
const (
	EventNormal  EventType = "Normal"
	EventWarning EventType = "Warning"
)

// Event is a transition worth an event on the composite and its claim.
type Event struct {
	Type    EventType
	Reason  string
	Message string
}

// Event reasons.
const (
	ReasonStarted     = "PhasedRolloutStarted"
	ReasonRestarted   = "PhasedRolloutRestarted"
	ReasonStepDone    = "PhasedRolloutStepDone"
	ReasonCheckFailed = "PhasedRolloutCheckFailed"
	ReasonSuspended   = "PhasedRolloutSuspended"
	ReasonCompleted   = "PhasedRolloutCompleted"
)

func started(rev string, partition int32) Event {
	return Event{EventNormal, ReasonStarted,
		fmt.Sprintf("rolling out revision %s one pod at a time, from partition %d", rev, partition)}
}

func restarted(old, rev string, partition int32) Event {
	return Event{EventNormal, ReasonRestarted,
		fmt.Sprintf("revision %s replaces %s mid-rollout: the rollout starts again from partition %d", rev, old, partition)}
}

func stepDone(ordinal int32, rev string) Event {
	return Event{EventNormal, ReasonStepDone,
		fmt.Sprintf("the checks passed: partition lowered to %d, pod ordinal %d moves to revision %s", ordinal, ordinal, rev)}
}

// checkFailed is emitted on the first failure of a streak only: a check
// failing for an hour would otherwise raise an event per period.
func checkFailed(partition int32, o Outcome, message string) Event {
	what := "returned no data"
	if o.Err {
		what = "could not be run"
	}
	if message != "" {
		what += ": " + message
	}
	return Event{EventWarning, ReasonCheckFailed, fmt.Sprintf("the check at partition %d %s", partition, what)}
}

func suspended() Event {
	return Event{EventNormal, ReasonSuspended,
		"standardRollingUpdate is true: the StatefulSet controller rolls every pod on its own"}
}

func completed(rev string) Event {
	return Event{EventNormal, ReasonCompleted, fmt.Sprintf("every pod runs revision %s", rev)}
}
