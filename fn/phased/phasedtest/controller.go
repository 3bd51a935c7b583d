// Package phasedtest is test support for the forms of a phased rollout:
// the StatefulSet controller, reduced to what a rollout observes.
package phasedtest

// Controller plays the StatefulSet controller for one StatefulSet: a pod
// is the revision it runs; pods at or above the partition move to the
// update revision one at a time, highest ordinal first, each unavailable
// for one tick; once every pod runs it, the update revision becomes the
// current one.
type Controller struct {
	Generation, ObservedGeneration int64
	Partition                      int32
	UpdateRevision                 string
	CurrentRevision                string
	// Pods are the revisions of the pods, by ordinal.
	Pods []string
	// Unavailable is the ordinal of the pod being replaced, -1 for none.
	Unavailable int
}

// New is a settled StatefulSet of replicas pods on revision rev.
func New(replicas int32, rev string) Controller {
	c := Controller{Generation: 1, ObservedGeneration: 1, UpdateRevision: rev, CurrentRevision: rev, Unavailable: -1}
	c.Pods = make([]string, replicas)
	for i := range c.Pods {
		c.Pods[i] = rev
	}
	return c
}

// Tick runs the controller once; it reports whether anything changed.
func (c *Controller) Tick() bool {
	changed := c.ObservedGeneration != c.Generation
	c.ObservedGeneration = c.Generation
	if c.Unavailable >= 0 {
		c.Unavailable = -1
		return true
	}
	for i := len(c.Pods) - 1; i >= int(c.Partition) && i >= 0; i-- {
		if c.Pods[i] != c.UpdateRevision {
			c.Pods[i], c.Unavailable = c.UpdateRevision, i
			return true
		}
	}
	if c.Updated() == len(c.Pods) && c.CurrentRevision != c.UpdateRevision {
		c.CurrentRevision = c.UpdateRevision
		changed = true
	}
	return changed
}

// Updated counts the pods on the update revision.
func (c *Controller) Updated() int {
	n := 0
	for _, r := range c.Pods {
		if r == c.UpdateRevision {
			n++
		}
	}
	return n
}

// Available counts the pods that are available.
func (c *Controller) Available() int {
	if c.Unavailable >= 0 {
		return len(c.Pods) - 1
	}
	return len(c.Pods)
}

// Status is the StatefulSet's status as the API server shows it.
func (c *Controller) Status() map[string]any {
	return map[string]any{
		"observedGeneration": c.ObservedGeneration, "replicas": len(c.Pods), "readyReplicas": c.Available(), "availableReplicas": c.Available(),
		"updatedReplicas": c.Updated(), "currentRevision": c.CurrentRevision, "updateRevision": c.UpdateRevision,
	}
}
