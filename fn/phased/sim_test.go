package phased

import (
	"fmt"
	"time"
)

// simPod is a pod of the simulated StatefulSet: its revision, and when it
// is (or was) available.
type simPod struct {
	rev         string
	availableAt time.Time
}

// simSTS is a StatefulSet and its controller, reduced to what a phased
// rollout observes: a pod at or above the partition that is not on the
// update revision is replaced, one at a time and only while every pod is
// available (podManagementPolicy OrderedReady), highest ordinal first, and
// becomes available podDelay later; the update revision becomes current
// once every pod is on it and available.
type simSTS struct {
	now                            time.Time
	podDelay                       time.Duration
	partition                      int32
	template                       int
	generation, observedGeneration int64
	current, update                string
	pods                           []simPod
}

func revision(template int) string { return fmt.Sprintf("db-r%d", template) }

func newSimSTS(replicas int32, podDelay time.Duration) *simSTS {
	s := &simSTS{now: now, podDelay: podDelay, partition: replicas, generation: 1, observedGeneration: 1, current: revision(0), update: revision(0)}
	for range replicas {
		s.pods = append(s.pods, simPod{rev: revision(0), availableAt: now})
	}
	return s
}

func (s *simSTS) available(i int) bool { return !s.now.Before(s.pods[i].availableAt) }

func (s *simSTS) allAvailable() bool {
	for i := range s.pods {
		if !s.available(i) {
			return false
		}
	}
	return true
}

// apply is the composed StatefulSet's apply: a new partition or template
// is a new generation the controller has yet to observe.
func (s *simSTS) apply(partition int32, newTemplate bool) {
	if partition == s.partition && !newTemplate {
		return
	}
	s.partition = partition
	if newTemplate {
		s.template++
	}
	s.generation++
}

// reconcile is one pass of the StatefulSet controller at s.now. It reports
// whether it changed anything a watch would see.
func (s *simSTS) reconcile() bool {
	changed := s.observedGeneration != s.generation
	s.observedGeneration = s.generation
	s.update = revision(s.template)
	if s.allAvailable() {
		for i := len(s.pods) - 1; i >= int(s.partition); i-- {
			if s.pods[i].rev != s.update {
				s.pods[i] = simPod{rev: s.update, availableAt: s.now.Add(s.podDelay)}
				changed = true
				break
			}
		}
	}
	if s.current != s.update && s.allAvailable() && s.updated() == len(s.pods) {
		s.current, changed = s.update, true
	}
	return changed
}

func (s *simSTS) updated() int {
	n := 0
	for _, p := range s.pods {
		if p.rev == s.update {
			n++
		}
	}
	return n
}

// rolling counts the pods the partition lets go that are not yet updated
// and available.
func (s *simSTS) rolling() int {
	n := 0
	for i := int(s.partition); i < len(s.pods); i++ {
		if s.pods[i].rev != s.update || !s.available(i) {
			n++
		}
	}
	return n
}

// nextAvailable is the next time a pod becomes available, a change of the
// StatefulSet's status that a watch brings; zero when none is pending.
func (s *simSTS) nextAvailable() time.Time {
	var next time.Time
	for _, p := range s.pods {
		if p.availableAt.After(s.now) && (next.IsZero() || p.availableAt.Before(next)) {
			next = p.availableAt
		}
	}
	return next
}

func (s *simSTS) observe() *Observed {
	o := &Observed{
		Generation: s.generation, ObservedGeneration: s.observedGeneration,
		SpecReplicas: int32(len(s.pods)), Partition: ptr(s.partition), Replicas: int32(len(s.pods)),
		UpdatedReplicas: int32(s.updated()), CurrentRevision: s.current, UpdateRevision: s.update,
		PodRevisions: map[int32]string{},
	}
	for i, p := range s.pods {
		o.PodRevisions[int32(i)] = p.rev
		if s.available(i) {
			o.AvailableReplicas++
		}
	}
	return o
}
