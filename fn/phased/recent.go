package phased

import (
	"fmt"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Crossplane hands a call the composite and its composed resources from
// its informers' caches and applies what the call renders with server-side
// apply, forcing, without a precondition. A cache that lags (seen in CI: a
// composite read three seconds after a newer status of it was written)
// gives a call a snapshot from before the last lowering; decided on it,
// the call renders the old partition again and the StatefulSet controller
// rolls the pod it had just let go back to the current revision. Nothing
// in such a snapshot tells it from a current one, so the function
// remembers, in its own process, its last move of each rollout's partition
// for a short while, and Step reads that memory as one more input.

// recentWindow is how long a move is remembered: well above a cache's
// lag, short enough that a lowering whose apply failed is not re-applied on
// a verdict much older than the pod's drain probe interval.
const recentWindow = 30 * time.Second

// Recent is this function's last move of one rollout's partition: a step
// lowered, the rollout started or completed.
type Recent struct {
	// At is when it was decided.
	At time.Time
	// UpdateRevision is the revision observed.
	UpdateRevision string
	// Generation is the StatefulSet's metadata.generation the move was
	// decided on: the apply of the move raises it.
	Generation int64
	// Partition is the partition rendered.
	Partition int32
	// Status is the status written with it.
	Status *v1alpha1.PhasedRolloutStatus

	// tag names the call that made it (see Memory).
	tag string
}

// Remember is what a caller keeps of a final decision for the next calls:
// a move of the observed partition within the observed revision's
// rollout, and nothing else.
func Remember(in Input, d Decision) (Recent, bool) {
	o := in.Observed
	if d.Need != NeedNothing || d.Reasserted || o == nil || in.TemplateChanged || in.StandardRollingUpdate || d.Status == nil ||
		d.Status.UpdateRevision != o.UpdateRevision {
		return Recent{}, false
	}
	c := &call{in: in, replicas: max(in.Replicas, 0)}
	if d.Partition == c.observedPartition() {
		return Recent{}, false
	}
	return Recent{At: second(in.Now), UpdateRevision: o.UpdateRevision, Generation: o.Generation, Partition: d.Partition, Status: d.Status.DeepCopy()}, true
}

// recent is in.Recent when it speaks of the rollout observed: the same
// update revision, within recentWindow, and no new template in this call.
func (c *call) recent() *Recent {
	r, o := c.in.Recent, c.in.Observed
	if r == nil || o == nil || c.in.TemplateChanged || r.UpdateRevision != o.UpdateRevision || r.Status == nil {
		return nil
	}
	if age := c.now.Sub(r.At); age < 0 || age >= recentWindow {
		return nil
	}
	return r
}

// staleSnapshot decides a call whose StatefulSet is still at the
// generation this function's last move was decided on: the snapshot is
// older than the move's apply (which raises the generation). The move is
// rendered again with its status, and nothing else decided; the next call,
// on a newer snapshot, goes on.
func (c *call) staleSnapshot() (Decision, bool) {
	r := c.recent()
	if r == nil || c.in.Observed.Generation > r.Generation {
		return Decision{}, false
	}
	c.note(fmt.Sprintf("the StatefulSet observed (generation %d, partition %d) is older than this function's move to partition %d %s ago: the move is rendered again",
		c.in.Observed.Generation, c.observedPartition(), r.Partition, c.now.Sub(r.At)))
	return Decision{Status: r.Status.DeepCopy(), Partition: r.Partition, TTL: ttlStale, Notes: c.notes, Reasserted: true}, true
}

// olderStatus replaces a status older than this function's last move (a
// step of the same rollout above the partition it lowered to, or any step
// once it completed the rollout) with the status that move wrote: decided
// on, it would raise the partition.
func (c *call) olderStatus() {
	r := c.recent()
	p := c.prev
	if r == nil || p.Phase != v1alpha1.PhasedRolloutRolling || p.UpdateRevision != r.UpdateRevision || p.RollingPod == nil {
		return
	}
	done := r.Status.Phase == v1alpha1.PhasedRolloutUpdated
	if !done && (r.Status.Phase != v1alpha1.PhasedRolloutRolling || p.RollingPod.Partition <= r.Partition) {
		return
	}
	c.note(fmt.Sprintf("rollingPodStatus.partition %d is older than this function's move to partition %d %s ago: the rollout goes on from that move",
		p.RollingPod.Partition, r.Partition, c.now.Sub(r.At)))
	prev, notes := Decode(r.Status, c.in.Now)
	c.prev = prev
	c.notes = append(c.notes, notes...)
}
