package phased

import (
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Need is the I/O a call asks for before it can decide.
type Need int

// What a Decision needs.
const (
	// NeedNothing: the Decision is final.
	NeedNothing Need = iota
	// NeedCheck: run the check and call again with Input.CheckOutcome.
	NeedCheck
	// NeedDrain: probe pod DrainOrdinal and call again with
	// Input.Drain.Outcome.
	NeedDrain
)

// Decision is what one call decides.
//
// A Decision whose Need is set is not final. Call Step again with the same
// Input plus the outcome asked for, keeping any outcome already given (a
// check outcome, then a drain outcome: at most three calls). Until then
// nothing should be written: such a Decision carries the previous status and
// no event, and its Partition holds, so that a caller that writes it anyway
// moves nothing and loses nothing.
type Decision struct {
	// Need is the I/O to run before the Decision is final.
	Need Need
	// DrainOrdinal is the pod to probe when Need is NeedDrain.
	DrainOrdinal int32

	// Status is the next status; nil when there is none to write.
	Status *v1alpha1.PhasedRolloutStatus
	// Partition is the StatefulSet's
	// spec.updateStrategy.rollingUpdate.partition to render.
	Partition int32
	// TTL is when to be called again; 0 when no timer is needed.
	TTL time.Duration
	// Events are the transitions of this call; none when nothing changed.
	Events []Event
	// Notes say what of the input was repaired: a garbage status, a
	// timing out of range. They are the same on calls that decide the
	// same.
	Notes []string
	// Reasserted: the Decision renders Input.Recent again on a snapshot
	// older than it; it is no move of its own (Remember keeps nothing).
	Reasserted bool
}
