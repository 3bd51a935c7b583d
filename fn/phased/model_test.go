package phased

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// model drives Step against a simulated StatefulSet controller the way
// Crossplane drives the function: a call on every watch event and when the
// TTL runs out, the two-stage calls answered with random outcomes.
type model struct {
	t        *rapid.T
	sts      *simSTS
	replicas int32
	check    v1alpha1.RolloutCheck
	drain    bool
	status   *v1alpha1.PhasedRolloutStatus
	// Crossplane's caches may hand the calls shortly after a lowering the
	// snapshot from before it, whole or in part (an informer that lags, a
	// status write lost): the status and the StatefulSet the lowering
	// call read are kept for that while, which an edit ends.
	lowered   bool
	loweredAt time.Time
	older     *v1alpha1.PhasedRolloutStatus
	olderObs  *Observed
	recent    *Recent

	// calm: checks succeed, pods drain, and no one edits the template.
	calm bool
	// streak is the checks in a row that succeeded since the partition
	// last moved.
	streak int32
	edits  int
}

func (m *model) draw(lo, hi int, label string) int { return rapid.IntRange(lo, hi).Draw(m.t, label) }

// call is one reconcile: Step, with the I/O it asks for, then the apply.
func (m *model) call(edit bool) Decision {
	fresh := m.sts.observe()
	obs, prev := fresh, m.status
	if edit {
		m.lowered = false
	}
	if m.lowered && m.sts.now.Sub(m.loweredAt) <= 10*time.Second {
		switch m.draw(0, 5, "stale snapshot") {
		case 0:
			prev = m.older
		case 1:
			obs = m.olderObs
		case 2:
			obs, prev = m.olderObs, m.older
		}
	}
	in := Input{Now: m.sts.now, Replicas: m.replicas, Check: m.check, TemplateChanged: edit, Observed: obs, Previous: prev, Recent: m.recent}
	if m.drain {
		in.Drain = &DrainGate{Interval: 10 * time.Second}
	}
	d := Step(in)
	for range 2 {
		switch d.Need {
		case NeedCheck:
			o := Outcome{Succeeded: m.calm || m.draw(0, 3, "check fails") > 0}
			o.Err = !o.Succeeded && m.draw(0, 1, "error") == 1
			if o.Succeeded {
				m.streak++
			} else {
				m.streak = 0
			}
			in.CheckOutcome = &o
		case NeedDrain:
			in.Drain.Outcome = &DrainOutcome{Ordinal: d.DrainOrdinal, Drained: m.calm || m.draw(0, 2, "drained") > 0}
		case NeedNothing:
		}
		if d.Need != NeedNothing {
			d = Step(in)
		}
	}
	if d.Need != NeedNothing {
		m.t.Fatalf("Step still needs %v after a check and a drain outcome", d.Need)
	}
	m.checkDecision(in, d)
	if r, ok := Remember(in, d); ok {
		m.recent = &r
	}
	if d.Partition < m.sts.partition {
		m.lowered, m.loweredAt, m.older, m.olderObs = true, m.sts.now, m.status, fresh
	}
	m.status = d.Status
	m.sts.apply(d.Partition, edit)
	return d
}

// checkDecision asserts the rollout's safety on one final decision.
func (m *model) checkDecision(in Input, d Decision) {
	held := m.sts.partition
	switch {
	case d.Partition < 0 || d.Partition > m.replicas:
		m.t.Fatalf("partition %d outside [0, %d]", d.Partition, m.replicas)
	case in.TemplateChanged && d.Partition != m.replicas:
		m.t.Fatalf("partition %d rendered with a new template, want %d", d.Partition, m.replicas)
	case d.Partition < held-1:
		m.t.Fatalf("partition dropped from %d to %d in one call", held, d.Partition)
	case d.Partition > held && !in.TemplateChanged && !rolledOut(in.Observed):
		m.t.Fatalf("partition raised from %d to %d mid-rollout: the StatefulSet rolls pod %d back", held, d.Partition, held)
	case d.TTL < 0 || d.TTL > 0 && d.TTL < time.Second:
		m.t.Fatalf("TTL %v", d.TTL)
	}
	if d.Partition == held-1 {
		o := in.Observed
		if o.AvailableReplicas < m.replicas {
			m.t.Fatalf("partition lowered to %d with %d of %d pods available", d.Partition, o.AvailableReplicas, m.replicas)
		}
		if held < m.replicas && o.PodRevisions[held] != o.UpdateRevision {
			m.t.Fatalf("partition lowered to %d before pod %d was updated", d.Partition, held)
		}
		if m.streak < m.check.SuccessThreshold {
			m.t.Fatalf("partition lowered to %d after %d successful checks in a row, want %d", d.Partition, m.streak, m.check.SuccessThreshold)
		}
	}
	if d.Partition != held {
		m.streak = 0
	}
	// Called again with its own status and no outcome, Step either asks
	// for I/O again or decides the same, silently.
	again := in
	again.Previous, again.CheckOutcome = d.Status, nil
	if again.Drain != nil {
		again.Drain = &DrainGate{Interval: again.Drain.Interval}
	}
	if d2 := Step(again); d2.Need == NeedNothing && (d2.Partition != d.Partition || len(d2.Events) > 0 || !cmp.Equal(d2.Status, d.Status)) {
		m.t.Fatalf("not idempotent: %+v then %+v", d, d2)
	}
}

// rolledOut: every pod is on the update revision, the only state in
// which raising the partition rolls no pod back.
func rolledOut(o *Observed) bool {
	return o.CurrentRevision == o.UpdateRevision && o.UpdatedReplicas >= o.Replicas
}

// advance moves the clock to the next call: a watch event (the controller
// changed the StatefulSet, or a pod becomes available) or the TTL, and
// runs the controller there. With neither, it reports false.
func (m *model) advance(d Decision) bool {
	s := m.sts
	// The controller catches up with a new generation at once or, drawn,
	// only after this call's status has been read stale.
	if s.observedGeneration != s.generation && m.draw(0, 3, "controller lags") == 0 {
		s.now = s.now.Add(time.Second)
		return true
	}
	if s.reconcile() {
		s.now = s.now.Add(time.Second)
		s.reconcile()
		return true
	}
	next := s.nextAvailable()
	if d.TTL > 0 && (next.IsZero() || s.now.Add(d.TTL).Before(next)) {
		next = s.now.Add(d.TTL)
	}
	if next.IsZero() {
		return false
	}
	s.now = next
	s.reconcile()
	return true
}

// TestModel rolls random StatefulSets through random check outcomes, drain
// probes, pod start times and template edits, asserting after every call
// that the partition never drops by more than one, never below 0, never
// while a pod is unavailable or before successThreshold checks in a row,
// and that at most one pod rolls at a time. Then the checks succeed and
// the edits stop, and every rollout must complete.
func TestModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := &model{t: rt, replicas: int32(rapid.IntRange(1, 5).Draw(rt, "replicas"))}
		m.check = v1alpha1.RolloutCheck{
			InitialDelaySeconds: int32(rapid.SampledFrom([]int{0, 10, 60}).Draw(rt, "initialDelay")),
			PeriodSeconds:       int32(rapid.IntRange(1, 60).Draw(rt, "period")),
			SuccessThreshold:    int32(rapid.IntRange(1, 4).Draw(rt, "threshold")),
		}
		m.drain = rapid.Bool().Draw(rt, "drain gate")
		m.sts = newSimSTS(m.replicas, time.Duration(rapid.IntRange(0, 120).Draw(rt, "pod delay"))*time.Second)

		chaos := rapid.IntRange(0, 150).Draw(rt, "chaos calls")
		for i := range chaos {
			edit := i == 0 || m.edits < 3 && m.draw(0, 20, "edit") == 0
			if edit && i > 0 {
				m.edits++
			}
			d := m.call(edit)
			if n := m.sts.rolling(); n > 1 {
				rt.Fatalf("%d pods rolling at once at partition %d", n, m.sts.partition)
			}
			if !m.advance(d) {
				// At rest: the next edit is the next event.
				m.sts.now = m.sts.now.Add(time.Hour)
			}
		}

		m.calm = true
		budget := int(m.replicas)*(int(m.check.SuccessThreshold)+8)*4 + 40
		for range budget {
			d := m.call(false)
			if n := m.sts.rolling(); n > 1 {
				rt.Fatalf("%d pods rolling at once at partition %d", n, m.sts.partition)
			}
			if !m.advance(d) {
				break
			}
		}
		want := revision(m.sts.template)
		if m.status == nil || m.status.Phase != v1alpha1.PhasedRolloutUpdated || m.status.UpdateRevision != want ||
			m.sts.updated() != int(m.replicas) || m.sts.partition != m.replicas {
			rt.Fatalf("the rollout of %s did not complete: status %+v, %d of %d pods updated, partition %d",
				want, m.status, m.sts.updated(), m.replicas, m.sts.partition)
		}
	})
}
