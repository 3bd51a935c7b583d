package phased

import (
	"fmt"
	"math"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// roll runs the rollout of the observed update revision: it starts one
// when the status rolls no rollout of it (restarting any other), then moves
// the step as far as this call's observations allow. Each write of the
// status costs against Crossplane's circuit breaker, so conditions that
// already hold are passed in the same call; but the partition is lowered at
// most once per call, so the loop is bounded by construction.
func (c *call) roll() Decision {
	rev := c.in.Observed.UpdateRevision
	next := c.prev.clone()
	var events []Event
	switch {
	case next.Phase != v1alpha1.PhasedRolloutRolling || next.UpdateRevision != rev:
		start := c.startPartition()
		if next.Phase == v1alpha1.PhasedRolloutRolling && next.UpdateRevision != "" {
			events = append(events, restarted(next.UpdateRevision, rev, start))
		} else {
			events = append(events, started(rev, start))
		}
		next = Status{Phase: v1alpha1.PhasedRolloutRolling, UpdateRevision: rev, RolloutStartTime: c.now, RollingPod: &RollingPod{Partition: start}}
	case next.RollingPod == nil:
		start := c.startPartition()
		c.note(fmt.Sprintf("the rolling status has no rollingPodStatus: the step starts again at partition %d", start))
		next.RollingPod = &RollingPod{Partition: start}
	default:
		c.checkPartition(next.RollingPod)
	}
	if next.RolloutStartTime.IsZero() {
		next.RolloutStartTime = c.now
	}
	next.RolloutEndTime = time.Time{}

	st := next.RollingPod
	if d, held := c.regate(next); held {
		return d
	}
	r := c.advance(st, c.in.CheckOutcome, c.drainOutcome())
	switch r.need {
	case NeedCheck:
		return c.ask(r.need, st.Partition, 0)
	case NeedDrain:
		return c.ask(r.need, st.Partition, st.Partition-1)
	case NeedNothing:
	}
	events = append(events, r.events...)
	if r.lower {
		ordinal := st.Partition - 1
		*st = RollingPod{Partition: ordinal}
		events = append(events, stepDone(ordinal, rev))
		r.ttl = c.settle(st)
	}
	return c.decide(next, st.Partition, r.ttl, events)
}

// settle moves a step this call has just lowered onto as far as it goes
// without outcomes and returns when to call again: the step may hold
// already (its pod on the revision), but no outcome belongs to it yet, so
// a check it needs waits for the next call, and a second lowering never
// happens in this one.
func (c *call) settle(st *RollingPod) time.Duration {
	if r := c.advance(st, nil, nil); r.need == NeedNothing && !r.lower {
		return r.ttl
	}
	return ttlFloor
}

// startPartition is where a rollout starts: at Replicas, so that no pod
// moves before the first checks, except that it never lowers the
// partition the StatefulSet holds, and that pods already on the update
// revision at the top (left by the StatefulSet controller after
// standardRollingUpdate, or by a status lost mid-rollout) are not rolled
// again: the rollout resumes below them.
func (c *call) startPartition() int32 {
	tail := c.replicas
	for tail > 0 && c.onUpdateRevision(tail-1) {
		tail--
	}
	return max(tail, c.observedPartition())
}

// onUpdateRevision: pod ordinal is observed on the update revision. A pod
// not observed is on none, even when the revision is unknown (""); this
// also bounds startPartition's loop by the pods observed, whatever the
// replicas.
func (c *call) onUpdateRevision(ordinal int32) bool {
	o := c.in.Observed
	rev, ok := o.PodRevisions[ordinal]
	return ok && rev != "" && rev == o.UpdateRevision
}

// regate decides a lowering the status records but the StatefulSet does
// not hold (its partition is the one above the step's), under a drain
// gate. The verdict that let the pod go belongs to an earlier call, and
// the pod may have served since: the lowering's apply failed, or a later
// call raised the partition again (a template that changed and changed
// back) and its status write was lost. So the pod must drain again before
// the lower partition is rendered; until it has, the observed partition is
// rendered and the status kept. Once it has, the lowering is rendered as
// after any lowering. The cost: a StatefulSet read from Crossplane's cache
// before the lowering's apply looks the same, and should the pod then not
// be found drained (it is being replaced), the partition goes back up for
// a call; the pod, on its new revision or about to be, is let go again on
// the next verdict.
func (c *call) regate(next Status) (Decision, bool) {
	st := next.RollingPod
	g, held := c.in.Drain, c.observedPartition()
	if g == nil || st.Partition >= held {
		return Decision{}, false
	}
	switch d := g.Outcome; {
	case d == nil || d.Ordinal != st.Partition:
		return c.ask(NeedDrain, held, st.Partition), true
	case !d.Drained:
		return c.hold(held, drainInterval(g)), true
	}
	return c.decide(next, st.Partition, c.settle(st), nil), true
}

// checkPartition restarts a step whose partition this function cannot have
// written: outside [0, replicas] (a scale-down, or garbage), or more than
// one below what the StatefulSet holds (a lowering is applied before the
// next one can be decided). Taken as it is, such a partition would let the
// StatefulSet controller roll several pods at once.
func (c *call) checkPartition(st *RollingPod) {
	lo := max(c.observedPartition()-1, 0)
	if st.Partition >= lo && st.Partition <= c.replicas {
		return
	}
	start := c.startPartition()
	c.note(fmt.Sprintf("rollingPodStatus.partition %d is outside [%d, %d]: the step starts again at partition %d", st.Partition, lo, c.replicas, start))
	*st = RollingPod{Partition: start, TotalFailedChecks: st.TotalFailedChecks, LastCheckMessage: st.LastCheckMessage}
}

func (c *call) drainOutcome() *DrainOutcome {
	if c.in.Drain == nil {
		return nil
	}
	return c.in.Drain.Outcome
}

// result is how far a step got in one call.
type result struct {
	need   Need
	lower  bool
	ttl    time.Duration
	events []Event
}

// advance moves the step st through seed 004's conditions, in order, as
// far as they hold: the pod last let go is updated, every pod is
// available, the initial delay has passed, the checks have succeeded, and
// the next pod has drained. A condition that stops holding sends the step
// back, and its analysis starts again: checks that ran while a pod was
// down say nothing about the pods that are up.
func (c *call) advance(st *RollingPod, check *Outcome, drain *DrainOutcome) result {
	switch {
	case st.Partition < c.replicas && !c.onUpdateRevision(st.Partition):
		st.restartAnalysis(v1alpha1.RollingPodWaitForPodToBeUpdated)
		return result{ttl: ttlWatch}
	case !c.allAvailable():
		st.restartAnalysis(v1alpha1.RollingPodWaitForAllPodsToBeAvailable)
		return result{ttl: ttlWatch}
	case st.Partition == 0:
		// Every pod is let go: what is left is the StatefulSet controller
		// declaring the revision current, once each pod is on it and
		// ready, a change of its status that comes as a watch event.
		st.restartAnalysis(v1alpha1.RollingPodWaitForPodToBeUpdated)
		return result{ttl: ttlWatch}
	}
	r, passed := c.analyze(st, check)
	if !passed {
		return r
	}
	events := r.events
	if g := c.in.Drain; g != nil {
		// The success streak is kept while the pod drains: the checks
		// vouch for the pods already rolled, which draining does not
		// change.
		st.Status = v1alpha1.RollingPodWaitForDrain
		switch {
		case drain == nil || drain.Ordinal != st.Partition-1:
			return result{need: NeedDrain}
		case !drain.Drained:
			return result{ttl: drainInterval(g), events: events}
		}
	}
	return result{lower: true, events: events}
}

// analyze runs the analysis of a step whose pods are all available: the
// initial delay from when they were, then a check every period until
// successThreshold in a row have succeeded. passed says the streak is
// there; otherwise r says what the analysis waits for.
func (c *call) analyze(st *RollingPod, check *Outcome) (r result, passed bool) {
	if c.in.Unchecked {
		return result{}, true
	}
	if st.AnalysisStartTime.IsZero() {
		st.restartAnalysis(v1alpha1.RollingPodWaitForInitialDelay)
		st.AnalysisStartTime = c.now
	}
	if end := st.AnalysisStartTime.Add(c.timing.initialDelay); c.now.Before(end) {
		st.Status = v1alpha1.RollingPodWaitForInitialDelay
		return result{ttl: end.Sub(c.now)}, false
	}
	if st.ConsecutiveSuccessfulChecks >= c.timing.threshold {
		return result{}, true
	}
	if st.Status != v1alpha1.RollingPodPrometheusError {
		st.Status = v1alpha1.RollingPodWaitForChecks
	}
	if due := st.LastCheckTime.Add(c.timing.period); !st.LastCheckTime.IsZero() && c.now.Before(due) {
		return result{ttl: due.Sub(c.now)}, false
	}
	if check == nil {
		return result{need: NeedCheck}, false
	}
	events := c.fold(st, *check)
	if st.ConsecutiveSuccessfulChecks < c.timing.threshold {
		return result{ttl: c.timing.period, events: events}, false
	}
	return result{events: events}, true
}

// allAvailable: every pod of the rendered replicas is available. While the
// observed spec.replicas differs, a scale is under way and the available
// count describes another size.
func (c *call) allAvailable() bool {
	o := c.in.Observed
	return o.SpecReplicas == c.replicas && o.AvailableReplicas >= c.replicas
}

// restartAnalysis sends the step back to status, before its analysis. The
// failure total and the last message are the step's history and stay.
func (st *RollingPod) restartAnalysis(status v1alpha1.RollingPodPhase) {
	*st = RollingPod{Status: status, Partition: st.Partition, TotalFailedChecks: st.TotalFailedChecks, LastCheckMessage: st.LastCheckMessage}
}

// fold records one check outcome in the step. An error is a failure too:
// a check that cannot run must not let the rollout go on.
func (c *call) fold(st *RollingPod, o Outcome) []Event {
	st.LastCheckTime = c.now
	st.LastCheckMessage = clip(o.Message)
	if o.Succeeded && !o.Err {
		st.Status = v1alpha1.RollingPodWaitForChecks
		st.ConsecutiveSuccessfulChecks = inc(st.ConsecutiveSuccessfulChecks)
		st.ConsecutiveFailedChecks = 0
		return nil
	}
	st.Status = v1alpha1.RollingPodWaitForChecks
	if o.Err {
		st.Status = v1alpha1.RollingPodPrometheusError
	}
	st.ConsecutiveSuccessfulChecks = 0
	st.ConsecutiveFailedChecks = inc(st.ConsecutiveFailedChecks)
	st.TotalFailedChecks = inc(st.TotalFailedChecks)
	if st.ConsecutiveFailedChecks == 1 {
		return []Event{checkFailed(st.Partition, o, st.LastCheckMessage)}
	}
	return nil
}

// inc counts without wrapping: a counter read back from status may be
// anything up to MaxInt32.
func inc(n int32) int32 {
	if n == math.MaxInt32 {
		return n
	}
	return n + 1
}
