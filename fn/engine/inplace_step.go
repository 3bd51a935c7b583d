package engine

import (
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// RequirementRolledPod is the pod of the active generation at its
// StatefulSet's partition: the pod an in-place step let go last.
const RequirementRolledPod = "rolled-pod"

// The PhasedRollout condition: where the last in-place update stands.
const (
	TypePhasedRollout   = "PhasedRollout"
	ReasonUpdated       = "Updated"
	ReasonCheckError    = "CheckError"
	ReasonUpdateStopped = "UpdateStopped"
	ReasonSuspended     = "Suspended"
)

// partitionOf is the partition a call renders into a generation's
// StatefulSet, over the recorded one.
type partitionOf struct {
	gen   int
	value int32
}

// withPartition is d with its StatefulSet's partition set to p: a copy, so
// the recording it came from is not touched.
func withPartition(d DesiredObject, p int32) DesiredObject {
	obj := deepCopy(d.Object)
	if err := unstructured.SetNestedField(obj, int64(p), "spec", "updateStrategy", "rollingUpdate", "partition"); err != nil {
		// The recording was verified to be a StatefulSet; a spec that is not
		// an object cannot be one.
		return d
	}
	return DesiredObject{Object: obj, Ready: d.Ready}
}

// stepInput is the in-place step this call runs, without its outcomes: only
// in updating, for an active generation with a usable recording whose
// StatefulSet is observed. The read layer (to run a due check or drain
// probe) and the machine (to decide) both take it from here, so an outcome
// is never missing when it matters.
func stepInput(in Inputs, now time.Time) (phased.Input, bool) {
	n := in.Status.ActiveGeneration
	if in.Status.Phase != v1alpha1.EnginePhaseUpdating || n < 0 || n != in.Status.CurrentGeneration {
		return phased.Input{}, false
	}
	rec, ok := in.Renderings[n]
	if !ok || !rec.usable() {
		return phased.Input{}, false
	}
	si := phased.Input{
		Now:                   now,
		StandardRollingUpdate: in.Spec.StandardRollingUpdate,
		Replicas:              clampInt32(number(rec.Objects.StatefulSet, "spec", "replicas")),
		Unchecked:             in.Spec.Analysis == nil,
		Previous:              in.Status.PhasedRollout,
	}
	if in.Spec.Analysis != nil {
		si.Check = *in.Spec.Analysis
	}
	if p := effectivePolicy(in.Spec, in.classSpec()); p.drainChecked() {
		si.Drain = &phased.DrainGate{Interval: p.DrainCheckInterval}
	}
	sts := observedStatefulSet(in, n)
	if sts == nil {
		return si, true
	}
	want, _, _ := unstructured.NestedString(rec.Objects.StatefulSet, "metadata", "annotations", AnnotationTemplateHash)
	si.TemplateChanged = sts.Annotations[AnnotationTemplateHash] != want
	si.Observed = phased.ObserveStatefulSet(sts, in.RolledPod)
	return si, true
}

// observedStatefulSet is generation gen's observed StatefulSet, decoded
// whole; nil when it is not observed or not a StatefulSet. Only an
// in-place update reads it so: at rest the engine reads the few fields it
// needs in place.
func observedStatefulSet(in Inputs, gen int) *appsv1.StatefulSet {
	obs := in.Observed[resourceName(gen, suffixStatefulSet)]
	if obs == nil {
		return nil
	}
	sts := &appsv1.StatefulSet{}
	if composite.Decode(obs.UnstructuredContent(), sts) != nil {
		return nil
	}
	return sts
}

// rolledPodName is the pod an in-place update let go last: the active
// StatefulSet's pod at its partition, when the partition lets one go.
func rolledPodName(in Inputs) (string, int32, bool) {
	n := in.Status.ActiveGeneration
	if in.Status.Phase != v1alpha1.EnginePhaseUpdating || in.Engine == "" || n < 0 {
		return "", 0, false
	}
	sts := observedStatefulSet(in, n)
	if sts == nil {
		return "", 0, false
	}
	p, ok := phased.RolledPod(sts)
	if !ok {
		return "", 0, false
	}
	return podName(in.Engine, n, p), p, true
}

// podName is the name of generation gen's pod with the given ordinal.
func podName(engine string, gen int, ordinal int32) string {
	return statefulSetName(engine, gen) + "-" + strconv.FormatInt(int64(ordinal), 10)
}

// podDrain is the drain verdict of the one pod a step is about to let go.
type podDrain struct {
	Ordinal int32
	Verdict scrape.Verdict
}

// podScrape is a scrape of generation gen's pod with the given ordinal.
func podScrape(in Inputs, gen int, ordinal int32) drainCheck {
	s := generationScrape(in, gen)
	set := generationLabels(in.Engine, gen)
	set[appsv1.StatefulSetPodNameLabel] = podName(in.Engine, gen, ordinal)
	s.Selector = labels.SelectorFromSet(set)
	return s
}

// checkOutcome is a check's outcome as a step reads it.
func checkOutcome(o promcheck.Outcome) *phased.Outcome {
	return &phased.Outcome{Succeeded: o.Succeeded, Err: o.Cause != "", Message: o.Message}
}

// phasedCondition is the PhasedRollout condition, set only for an engine
// that has run an in-place update.
func phasedCondition(st *v1alpha1.PhasedRolloutStatus, phase v1alpha1.EnginePhase) (Condition, bool) {
	if st == nil {
		return Condition{}, false
	}
	c := Condition{Type: TypePhasedRollout, Status: metav1.ConditionFalse, Reason: ReasonRolling}
	switch {
	case phase != v1alpha1.EnginePhaseUpdating && st.Phase == v1alpha1.PhasedRolloutRolling:
		c.Reason, c.Message = ReasonUpdateStopped, "the in-place update stopped for a new generation: "+phased.Describe(*st)
	case st.Phase == v1alpha1.PhasedRolloutUpdated:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonUpdated, "every pod runs revision "+st.UpdateRevision
	case st.Phase == v1alpha1.PhasedRolloutSuspended:
		c.Reason, c.Message = ReasonSuspended, "standardRollingUpdate is true: the StatefulSet controller rolls every pod without checks or the drain gate"
		if phase != v1alpha1.EnginePhaseUpdating {
			c.Status, c.Message = metav1.ConditionTrue, "every pod was rolled by the StatefulSet controller (standardRollingUpdate)"
		}
	default:
		c.Message = phased.Describe(*st)
		if rp := st.RollingPodStatus; rp != nil && rp.Status == v1alpha1.RollingPodPrometheusError {
			c.Reason = ReasonCheckError
		}
	}
	c.Message = BoundMessage(c.Message)
	return c, true
}
