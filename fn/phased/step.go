package phased

import (
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Step decides one call of the phased rollout. The rules apply top-down,
// first match wins:
//
//  1. standardRollingUpdate: partition 0, phase suspended; the StatefulSet
//     controller rolls on its own. Above the template guard on purpose: an
//     uncontrolled rollout of the new template is what was asked for;
//  2. no StatefulSet observed: partition Replicas, the status unchanged;
//  3. the pod template changes in this call: partition Replicas, the
//     status unchanged. This call's apply creates a revision no pod may
//     take unchecked; a rollout under way restarts once the new update
//     revision is observed;
//  4. the snapshot is older than this function's last lowering of the
//     rollout (Input.Recent): the lowering is rendered again, nothing
//     else decided; a status older than it is replaced by its status;
//  5. the StatefulSet's status is older than its spec: its revisions and
//     availability describe another spec, so the partition it holds is
//     kept, the status unchanged, and Step asks to be called again soon;
//  6. nothing to roll: partition Replicas, phase updated, so that the next
//     revision waits to be checked;
//  7. otherwise the rollout goes on (see roll).
func Step(in Input) Decision {
	c := newCall(in)
	switch {
	case in.StandardRollingUpdate:
		return c.suspend()
	case in.Observed == nil, in.TemplateChanged:
		return c.hold(c.replicas, ttlWatch)
	}
	if d, stale := c.staleSnapshot(); stale {
		return d
	}
	c.olderStatus()
	switch {
	case in.Observed.ObservedGeneration < in.Observed.Generation:
		return c.hold(c.observedPartition(), ttlStale)
	case c.nothingToRoll():
		return c.updated()
	}
	return c.roll()
}

// call is one call of Step: its input and what it has worked out.
type call struct {
	in       Input
	now      time.Time
	replicas int32
	timing   timing
	prev     Status
	notes    []string
}

func newCall(in Input) *call {
	c := &call{in: in, now: second(in.Now), replicas: max(in.Replicas, 0)}
	var notes []string
	c.prev, notes = Decode(in.Previous, in.Now)
	c.notes = append(c.notes, notes...)
	if !in.Unchecked {
		c.timing, notes = newTiming(in.Check)
		c.notes = append(c.notes, notes...)
	}
	return c
}

func (c *call) note(n string) { c.notes = append(c.notes, n) }

// decide is a final Decision of this call.
func (c *call) decide(s Status, partition int32, ttl time.Duration, events []Event) Decision {
	return Decision{Status: s.Encode(), Partition: partition, TTL: atLeastFloor(ttl), Events: events, Notes: c.notes}
}

// hold keeps the status and renders partition.
func (c *call) hold(partition int32, ttl time.Duration) Decision {
	return c.decide(c.prev, partition, ttl, nil)
}

// ask is a Decision that needs I/O first (see Decision).
func (c *call) ask(need Need, partition, ordinal int32) Decision {
	return Decision{Need: need, DrainOrdinal: ordinal, Status: c.prev.Encode(), Partition: partition, TTL: ttlNeed, Notes: c.notes}
}

func (c *call) suspend() Decision {
	next := c.prev.clone()
	next.Phase, next.RollingPod = v1alpha1.PhasedRolloutSuspended, nil
	var events []Event
	if c.prev.Phase != v1alpha1.PhasedRolloutSuspended {
		events = []Event{suspended()}
	}
	return c.decide(next, 0, 0, events)
}

// nothingToRoll: every pod is on the update revision. Equal revisions
// alone do not say so: reverting the template mid-rollout to the current
// revision makes them equal while the pods let go still run the reverted
// one, and those must be rolled back, not left behind a partition at
// Replicas.
func (c *call) nothingToRoll() bool {
	o := c.in.Observed
	return o.CurrentRevision == o.UpdateRevision && o.UpdatedReplicas >= o.Replicas
}

// updated ends a rollout, or confirms there is none. Only a rollout this
// function ran is completed: no event when the status was suspended or
// unset.
func (c *call) updated() Decision {
	next := c.prev.clone()
	next.Phase, next.UpdateRevision, next.RollingPod = v1alpha1.PhasedRolloutUpdated, c.in.Observed.UpdateRevision, nil
	var events []Event
	if c.prev.Phase == v1alpha1.PhasedRolloutRolling {
		next.RolloutEndTime = c.now
		events = []Event{completed(next.UpdateRevision)}
	}
	return c.decide(next, c.replicas, 0, events)
}

// observedPartition is the partition the StatefulSet holds now, within
// [0, replicas].
func (c *call) observedPartition() int32 {
	p := int32(0)
	if o := c.in.Observed; o != nil && o.Partition != nil {
		p = *o.Partition
	}
	return min(max(p, 0), c.replicas)
}
