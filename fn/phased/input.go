package phased

import (
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Input is everything one call of Step reads.
type Input struct {
	// Now is the time of the call: Step reads no clock.
	Now time.Time

	// Replicas is the spec.replicas the caller renders in this call; the
	// observed StatefulSet may not have caught up with it.
	Replicas int32

	// Check is the effective check block (schema defaults applied). Step
	// uses its timings; its query is the caller's to run.
	Check v1alpha1.RolloutCheck

	// Unchecked: no check is configured (an engine under rollout: phased
	// without spec.analysis). A step then passes as soon as the pod let go
	// is updated and every pod is available, which minReadySeconds and
	// readiness probes still hold back; Check is not read.
	Unchecked bool

	// StandardRollingUpdate hands the rollout to the StatefulSet
	// controller.
	StandardRollingUpdate bool

	// TemplateChanged says the StatefulSet rendered in this call has
	// another pod template than the observed one, so that this call's
	// apply creates a new revision.
	TemplateChanged bool

	// Observed is the StatefulSet as observed; nil before it exists.
	Observed *Observed

	// Previous is the status the last call wrote, read back from the
	// composite. Anything may have written it: Step trusts none of it.
	Previous *v1alpha1.PhasedRolloutStatus

	// CheckOutcome is the outcome of the check a Decision asked for
	// (NeedCheck); nil when none was run for this call.
	CheckOutcome *Outcome

	// Drain is the drain gate (engines); nil when it does not apply.
	Drain *DrainGate

	// Recent is this function's last lowering of the rollout, as Remember
	// made it; nil when the process has none (see recent.go).
	Recent *Recent
}

// Observed is what Step reads of the observed StatefulSet and its pods.
type Observed struct {
	// Generation is metadata.generation.
	Generation int64
	// SpecReplicas is spec.replicas.
	SpecReplicas int32
	// Partition is spec.updateStrategy.rollingUpdate.partition: what the
	// StatefulSet holds now. Nil when unset, which the StatefulSet
	// controller reads as 0.
	Partition *int32

	// ObservedGeneration is status.observedGeneration: below Generation,
	// the rest of the status describes an older spec.
	ObservedGeneration int64
	// Replicas is status.replicas.
	Replicas int32
	// UpdatedReplicas is status.updatedReplicas.
	UpdatedReplicas int32
	// AvailableReplicas is status.availableReplicas.
	AvailableReplicas int32
	// CurrentRevision is status.currentRevision.
	CurrentRevision string
	// UpdateRevision is status.updateRevision.
	UpdateRevision string

	// PodRevisions is each observed pod's controller-revision-hash label
	// by ordinal. A pod missing here is on no revision.
	PodRevisions map[int32]string
}

// Outcome is what one run of the check returned.
type Outcome struct {
	// Succeeded: the query returned data.
	Succeeded bool
	// Err: the query could not be run or its answer not read. It counts as
	// a failure whatever Succeeded says.
	Err bool
	// Message says what the query returned or why it failed, without any
	// credential. Step clips it.
	Message string
}

// DrainGate holds the partition above a pod until that pod serves no more
// queries (engines only).
type DrainGate struct {
	// Interval between two drain probes of a pod that still serves.
	Interval time.Duration
	// Outcome is the outcome of the probe a Decision asked for
	// (NeedDrain); nil when none was run for this call.
	Outcome *DrainOutcome
}

// DrainOutcome is what one drain probe found.
type DrainOutcome struct {
	// Ordinal of the probed pod; an outcome for another pod is not used.
	Ordinal int32
	// Drained: the pod serves no query and may be rolled.
	Drained bool
}
