package engine

import (
	"fmt"
	"math"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
)

// change is how a generation's recorded objects can become a new rendering.
type change int

const (
	// changeNew: only a new generation can carry the new rendering.
	changeNew change = iota
	// changeStatefulSetMeta: only what rollout: phased adds to the
	// StatefulSet differs (a change of the rollout policy); applied in
	// place, nothing rolls.
	changeStatefulSetMeta
	// changeTemplate: the pod template or the annotations differ too;
	// applied in place under rollout: phased, the pods rolling one at a
	// time.
	changeTemplate
)

// classify says how old can become next in place. The ConfigMap and the
// headless Service must not change: every pod of a generation mounts the
// one ConfigMap, whose config.yaml lists every node, so a change to it
// would reach old and new pods alike, unchecked. In the StatefulSet, only
// what the API server lets change on a live object may differ: the pod
// template, the annotations and the update strategy. The replicas (which
// the ConfigMap lists too), the storage (volumeClaimTemplates are
// immutable) and the rest need a new generation.
func classify(old, next GenerationObjects) change {
	if !reflect.DeepEqual(old.ConfigMap, next.ConfigMap) || !reflect.DeepEqual(old.Headless, next.Headless) {
		return changeNew
	}
	if reflect.DeepEqual(without(old.StatefulSet, false), without(next.StatefulSet, false)) {
		return changeStatefulSetMeta
	}
	if reflect.DeepEqual(without(old.StatefulSet, true), without(next.StatefulSet, true)) {
		return changeTemplate
	}
	return changeNew
}

// without is a copy of a StatefulSet without what rollout: phased adds to
// it (its update strategy and template-hash annotation) and, with
// template, without its pod template and every annotation: what an
// in-place update may change.
func without(sts map[string]any, template bool) map[string]any {
	c := deepCopy(sts)
	unstructured.RemoveNestedField(c, "spec", "updateStrategy")
	unstructured.RemoveNestedField(c, "metadata", "annotations", AnnotationTemplateHash)
	if ann, ok, _ := unstructured.NestedMap(c, "metadata", "annotations"); ok && len(ann) == 0 {
		unstructured.RemoveNestedField(c, "metadata", "annotations")
	}
	if template {
		unstructured.RemoveNestedField(c, "metadata", "annotations")
		unstructured.RemoveNestedField(c, "spec", "template")
	}
	return c
}

// inPlace decides a drift of the active generation n, whose recording is
// rec, against next, its rendering from the spec: whether it is applied
// in place, and how. It records next and returns true when it is; false
// leaves the drift to a new generation.
func (m *machine) inPlace(n int, rec, next Recording) bool {
	switch classify(rec.Objects, next.Objects) {
	case changeStatefulSetMeta:
		m.recorded[n] = next
		m.ttl = ttlProgress
		return true
	case changeNew:
		return false
	case changeTemplate:
		if m.policy.Rollout != v1alpha1.RolloutPhased {
			return false
		}
		m.recorded[n] = next
		m.ttl = ttlProgress
		if m.in.Spec.Replicas == 0 {
			// No pod runs the old template: nothing to roll.
			return true
		}
		m.next.Phase = v1alpha1.EnginePhaseUpdating
		// A new update starts afresh: the status of the last one, ended
		// or stopped, must not end this one before it has begun.
		m.next.PhasedRollout = nil
		m.event("UpdatingInPlace", fmt.Sprintf("Updating generation %d in place, one pod at a time", n))
		return true
	}
	return false
}

// clampInt32 is v within int32: observed numbers are whatever an object
// says.
func clampInt32(v int64) int32 {
	return int32(min(max(v, math.MinInt32), math.MaxInt32))
}

// updating runs the in-place update of the active generation, one seed-004
// step per call. A spec change that is still a change of the pod template
// starts the update again from the top with the new template; any other
// change rolls a new generation, which replaces this one, half updated as
// it may be, blue-green.
func (m *machine) updating() {
	n := m.in.Status.ActiveGeneration
	rec, ok := m.in.Renderings[n]
	if n < 0 || n != m.in.Status.CurrentGeneration || !ok || !rec.usable() {
		// Nothing recorded to update in place: decide as at rest, which
		// re-creates or re-records what is missing.
		m.next.Phase = terminalPhase(m.in.Spec)
		m.gatedPhase = true
		m.creatingOrStable()
		return
	}
	m.route = n
	m.emit[n] = emitAll
	m.next.Phase = v1alpha1.EnginePhaseUpdating
	if m.canRender() && m.updateDrifted(n, rec) {
		return
	}
	in, ok := stepInput(m.in, m.now)
	if !ok {
		m.ttl = ttlProgress
		return
	}
	if o := m.sig.StepCheck; o != nil {
		in.CheckOutcome = checkOutcome(*o)
	}
	if d := m.sig.StepDrain; d != nil && in.Drain != nil {
		in.Drain.Outcome = &phased.DrainOutcome{Ordinal: d.Ordinal, Drained: d.Verdict.Drained}
		if !d.Verdict.Drained {
			m.drainMsg = d.Verdict.Message
		}
	}
	in.Recent = m.sig.Recent
	d := phased.Step(in)
	m.partition = &partitionOf{gen: n, value: d.Partition}
	if d.Status != nil {
		st := *d.Status
		m.next.PhasedRollout = &st
	}
	for _, e := range d.Events {
		sev := SeverityNormal
		if e.Type == phased.EventWarning {
			sev = SeverityWarning
		}
		m.results = append(m.results, Result{Severity: sev, Reason: e.Reason, Message: BoundMessage(e.Message)})
	}
	m.ttl = d.TTL
	if m.ttl == 0 {
		m.ttl = ttlCreating
	}
	if r, ok := phased.Remember(in, d); ok {
		m.moved = &r
	}
	if m.updateDone(n, in, d, rec) {
		// At rest the recorded partition holds every pod again.
		m.partition, m.moved = nil, nil
		m.next.Phase = terminalPhase(m.in.Spec)
		m.inEffect = m.onlyGeneration(n)
		m.ttl = m.in.Config.StableTTL
	}
}

// updateDone: the step found every pod on the recorded template, from a
// StatefulSet status that describes its spec, and the spec still renders
// that recording. Step keeps the previous status when the template is
// still being applied or the status is stale, so its phase alone does not
// say so.
func (m *machine) updateDone(n int, in phased.Input, d phased.Decision, rec Recording) bool {
	o := in.Observed
	switch {
	case d.Need != phased.NeedNothing || d.Status == nil:
		return false
	case d.Status.Phase != v1alpha1.PhasedRolloutUpdated && d.Status.Phase != v1alpha1.PhasedRolloutSuspended:
		return false
	case in.TemplateChanged || o == nil || o.ObservedGeneration < o.Generation:
		return false
	case o.CurrentRevision == "" || o.CurrentRevision != o.UpdateRevision || o.UpdatedReplicas < o.Replicas:
		return false
	}
	return m.canRender() && rec.matches(renderedHash(m.renderInput(n)))
}

// unrolled resumes the in-place update of generation n when, at rest, its
// StatefulSet holds pods behind the partition on another revision than its
// template's, and reports whether it did: an update that ended early, or a
// status that says so, must not leave them there, nor a later change of
// policy lift the partition over them unchecked.
func (m *machine) unrolled(n int, rec Recording) bool {
	if _, ok, _ := unstructured.NestedString(rec.Objects.StatefulSet, "metadata", "annotations", AnnotationTemplateHash); !ok || m.in.Spec.Replicas == 0 {
		return false
	}
	obs := m.in.Observed[resourceName(n, suffixStatefulSet)]
	if obs == nil || !m.carriesRecording(n, rec) || obs.number("status", "observedGeneration") < obs.number("metadata", "generation") {
		return false
	}
	cur, _ := obs.str("status", "currentRevision")
	upd, _ := obs.str("status", "updateRevision")
	if cur == "" || upd == "" || cur == upd {
		return false
	}
	m.next.Phase = v1alpha1.EnginePhaseUpdating
	m.next.PhasedRollout = nil
	m.event("UpdatingInPlace", fmt.Sprintf("Generation %d's pods do not all run its template: updating them in place, one pod at a time", n))
	m.ttl = ttlProgress
	return true
}

// carriesRecording: generation n's observed StatefulSet carries the pod
// template its recording holds. A generation's objects match their
// recording from creation unless it was changed in place, which only
// phased renderings are, and they name their template.
func (m *machine) carriesRecording(n int, rec Recording) bool {
	obs := m.in.Observed[resourceName(n, suffixStatefulSet)]
	if obs == nil {
		return false
	}
	want, _, _ := unstructured.NestedString(rec.Objects.StatefulSet, "metadata", "annotations", AnnotationTemplateHash)
	got, _ := obs.str("metadata", "annotations", AnnotationTemplateHash)
	return got == want
}

// updateDrifted handles a spec that no longer renders generation n's
// recording mid-update, and reports whether it did: a change of the pod
// template again starts the update again from the top; any other change
// replaces the generation.
func (m *machine) updateDrifted(n int, rec Recording) bool {
	next := m.render(n)
	if rec.matches(next.Hash) {
		return false
	}
	if m.policy.Rollout != v1alpha1.RolloutPhased || classify(rec.Objects, next.Objects) == changeNew {
		m.replace(n, ", whose in-place update stops where it is")
		return true
	}
	m.recorded[n] = next
	m.ttl = ttlProgress
	// The step under way is forgotten: its drain verdict and checks were
	// for a template that is gone, and were the template to come back
	// (revisions are named by content), the step must not resume on them.
	m.next.PhasedRollout = nil
	m.event("UpdatingInPlace", fmt.Sprintf("The spec changed mid-update: updating generation %d in place again, from the top", n))
	return true
}

// creatingOrStable is the machine's choice for a terminal phase.
func (m *machine) creatingOrStable() {
	st := m.in.Status
	if st.ActiveGeneration < 0 || st.CurrentGeneration != st.ActiveGeneration {
		m.creating()
		return
	}
	m.stable()
}
