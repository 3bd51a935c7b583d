package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

func phasedSpec(image string, replicas int32) v1alpha1.FireboltEngineSpec {
	s := imageSpec(image)
	s.Replicas = replicas
	s.Rollout = v1alpha1.RolloutPhased
	return s
}

// observedPhased is a phased engine's StatefulSet of generation 0 as the
// StatefulSet controller reports it: partition p, pods from ordinal p on
// updated, all available, and the rolled pod's revision.
func observedPhased(t *testing.T, in *Inputs, spec v1alpha1.FireboltEngineSpec, p int64, current, update string) {
	t.Helper()
	obs := in.Observed[resourceName(0, suffixStatefulSet)]
	u := unstructured.Unstructured{Object: obs.m}
	hash, _, _ := unstructured.NestedString(in.Renderings[0].Objects.StatefulSet, "metadata", "annotations", AnnotationTemplateHash)
	ann := u.GetAnnotations()
	ann[AnnotationTemplateHash] = hash
	u.SetAnnotations(ann)
	_ = unstructured.SetNestedField(u.Object, p, "spec", "updateStrategy", "rollingUpdate", "partition")
	r := int64(spec.Replicas)
	_ = unstructured.SetNestedMap(u.Object, map[string]any{
		"observedGeneration": int64(1), "replicas": r, "readyReplicas": r, "availableReplicas": r,
		"updatedReplicas": r - p, "currentRevision": current, "updateRevision": update,
	}, "status")
	if p < r {
		in.RolledPod = &phased.Pod{Ordinal: int32(p), Revision: update}
	}
}

// updatingAt is a phased engine updating generation 0 in place from old to
// next: the recording holds next's rendering and the StatefulSet carries
// its template at partition p.
func updatingAt(t *testing.T, old, next v1alpha1.FireboltEngineSpec, p int64, prev *v1alpha1.PhasedRolloutStatus) Inputs {
	t.Helper()
	in := stableAt(t, 0, old)
	in.Spec = next
	withRecording(&in, 0, next)
	in.Status.Phase = v1alpha1.EnginePhaseUpdating
	in.Status.PhasedRollout = prev
	observedPhased(t, &in, next, p, "rev-a", "rev-b")
	return in
}

func stsPartition(t *testing.T, p Plan) (int64, bool) {
	t.Helper()
	d, ok := p.Resources[resourceName(0, suffixStatefulSet)]
	if !ok {
		t.Fatalf("no StatefulSet of generation 0 in the plan")
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(desiredMap(d), "spec", "updateStrategy", "rollingUpdate", "partition")
	return numberOf(v), ok
}

// Issue 11, part 1: which changes go in place and which roll a new
// generation, decided at rest.
func TestPhasedChangeRouting(t *testing.T) {
	withConfig := func(s v1alpha1.FireboltEngineSpec) v1alpha1.FireboltEngineSpec {
		s.CustomEngineConfig = raw(t, `{"cache":{"size":"2GiB"}}`)
		return s
	}
	withPVC := func(s v1alpha1.FireboltEngineSpec) v1alpha1.FireboltEngineSpec {
		s.Storage = v1alpha1.EngineStorageSpec{PersistentVolumeClaim: &v1alpha1.PersistentVolumeClaimStorageSpec{}}
		return s
	}
	graceful := func(s v1alpha1.FireboltEngineSpec) v1alpha1.FireboltEngineSpec {
		s.Rollout = v1alpha1.RolloutGraceful
		return s
	}
	old := phasedSpec("engine:4.29", 3)
	cases := map[string]struct {
		old, next   v1alpha1.FireboltEngineSpec
		wantPhase   v1alpha1.EnginePhase
		wantCurrent int
		wantEvents  []string
	}{
		"ImageChangeGoesInPlace":       {old, phasedSpec("engine:4.30", 3), "updating", 0, []string{"UpdatingInPlace"}},
		"ReplicasChangeRollsBlueGreen": {old, phasedSpec("engine:4.29", 4), "creating", 1, []string{"NewGeneration"}},
		"ConfigChangeRollsBlueGreen":   {old, withConfig(old), "creating", 1, []string{"NewGeneration"}},
		"StorageChangeRollsBlueGreen":  {old, withPVC(old), "creating", 1, []string{"NewGeneration"}},
		"GracefulImageChangeBlueGreen": {graceful(old), graceful(phasedSpec("engine:4.30", 3)), "creating", 1, []string{"NewGeneration"}},
		"PolicyToPhasedRollsNothing":   {graceful(old), old, "stable", 0, nil},
		"PolicyFromPhasedRollsNothing": {old, graceful(old), "stable", 0, nil},
		"StoppedImageChangeInPlace":    {phasedSpec("engine:4.29", 0), phasedSpec("engine:4.30", 0), "stopped", 0, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := stableAt(t, 0, tc.old)
			in.Spec = tc.next
			if tc.old.Replicas == 0 {
				in.Status.Phase = v1alpha1.EnginePhaseStopped
			}
			p := Compute(in, Signals{}, testNow)
			s := summarize(p)
			if s.Phase != tc.wantPhase || s.Current != tc.wantCurrent || s.Active != 0 || !cmp.Equal(s.Events, tc.wantEvents) {
				t.Fatalf("phase %s current %d active %d events %v; want %s %d 0 %v", s.Phase, s.Current, s.Active, s.Events, tc.wantPhase, tc.wantCurrent, tc.wantEvents)
			}
			// The decision is recorded first: this call applies generation
			// 0 as it was recorded, and the next applies the new rendering.
			if got, want := jsonOf(t, desiredMap(p.Resources[resourceName(0, suffixStatefulSet)])), jsonOf(t, in.Renderings[0].Objects.StatefulSet); got != want {
				t.Errorf("the call that decides changed generation 0's StatefulSet:\n got %s\nwant %s", got, want)
			}
			if tc.wantCurrent == 0 {
				want := renderFor(in, 0, tc.next)
				if len(p.Status.Renderings) != 1 || p.Status.Renderings[0].Hash != want.Hash {
					t.Errorf("generation 0 is not re-recorded from the new spec: %+v", p.Status.Renderings)
				}
				if p.Status.ObservedGeneration == in.Claim.Generation {
					t.Errorf("the claim's generation was published before the new rendering was applied")
				}
			}
		})
	}
}

// Issue 11, part 1: one in-place step, as the machine runs it, renders the
// step's partition into the active StatefulSet over the recorded one.
func TestUpdatingSteps(t *testing.T) {
	old, next := phasedSpec("engine:4.29", 3), phasedSpec("engine:4.30", 3)
	rolling := func(p int32, st v1alpha1.RollingPodPhase) *v1alpha1.PhasedRolloutStatus {
		return &v1alpha1.PhasedRolloutStatus{Phase: v1alpha1.PhasedRolloutRolling, UpdateRevision: "rev-b",
			RolloutStartTime: testNow.Add(-time.Minute).UTC().Format(time.RFC3339), RollingPodStatus: &v1alpha1.RollingPodStatus{Status: st, Partition: p}}
	}
	drained := &podDrain{Ordinal: 1, Verdict: scrape.Verdict{Drained: true}}
	busy := &podDrain{Ordinal: 1, Verdict: scrape.Verdict{Message: "pod demo-g0-1: 2 running queries"}}
	cases := map[string]struct {
		in            func(t *testing.T) Inputs
		sig           Signals
		wantPhase     v1alpha1.EnginePhase
		wantPartition int64
		wantStep      v1alpha1.RollingPodPhase
		wantEvents    []string
		// wantTTL, when set, is the requeue the plan asks for.
		wantTTL time.Duration
	}{
		"FirstCallHoldsEveryPod": {
			in: func(t *testing.T) Inputs {
				in := updatingAt(t, old, next, 3, nil)
				// The StatefulSet still carries the old template.
				obs := in.Observed[resourceName(0, suffixStatefulSet)]
				_ = unstructured.SetNestedField(obs.m, "old", "metadata", "annotations", AnnotationTemplateHash)
				return in
			},
			wantPhase: "updating", wantPartition: 3,
		},
		"StartsAndWaitsForTheDrain": {
			in:        func(t *testing.T) Inputs { return updatingAt(t, old, next, 3, nil) },
			wantPhase: "updating", wantPartition: 3, wantStep: v1alpha1.RollingPodWaitForDrain,
			sig:        Signals{StepDrain: &podDrain{Ordinal: 2, Verdict: scrape.Verdict{Message: "busy"}}},
			wantEvents: []string{"PhasedRolloutStarted"},
		},
		"DrainedPodIsLetGo": {
			in: func(t *testing.T) Inputs {
				return updatingAt(t, old, next, 2, rolling(2, v1alpha1.RollingPodWaitForDrain))
			},
			sig:       Signals{StepDrain: drained},
			wantPhase: "updating", wantPartition: 1, wantStep: v1alpha1.RollingPodWaitForPodToBeUpdated,
			wantEvents: []string{"PhasedRolloutStepDone"},
		},
		"BusyPodHolds": {
			in: func(t *testing.T) Inputs {
				return updatingAt(t, old, next, 2, rolling(2, v1alpha1.RollingPodWaitForDrain))
			},
			sig:       Signals{StepDrain: busy},
			wantPhase: "updating", wantPartition: 2, wantStep: v1alpha1.RollingPodWaitForDrain,
		},
		"UnappliedLoweringBusyHolds": {
			// The status let pod 1 go; the StatefulSet holds partition 2
			// (the lowering's apply failed, or a later call put it back and
			// its status was lost). Pod 1 serves: it is not let go on the
			// earlier verdict.
			in: func(t *testing.T) Inputs {
				return updatingAt(t, old, next, 2, rolling(1, v1alpha1.RollingPodWaitForPodToBeUpdated))
			},
			sig:       Signals{StepDrain: busy},
			wantPhase: "updating", wantPartition: 2, wantStep: v1alpha1.RollingPodWaitForPodToBeUpdated,
			wantTTL: 5 * time.Second, // the drain interval, not a probe asked for
		},
		"StaleSnapshotKeepsTheLowering": {
			// This function let pod 1 go 3 s ago; Crossplane's cache
			// hands it the snapshot from before (status and StatefulSet
			// at partition 2) while pod 1 still serves. The lowering is
			// rendered again, not partition 2, and not announced twice.
			in: func(t *testing.T) Inputs {
				return updatingAt(t, old, next, 2, rolling(2, v1alpha1.RollingPodWaitForDrain))
			},
			sig: Signals{StepDrain: busy, Recent: &phased.Recent{At: testNow.Add(-3 * time.Second), UpdateRevision: "rev-b", Generation: 1,
				Partition: 1, Status: rolling(1, v1alpha1.RollingPodWaitForPodToBeUpdated)}},
			wantPhase: "updating", wantPartition: 1, wantStep: v1alpha1.RollingPodWaitForPodToBeUpdated,
			wantTTL: 5 * time.Second,
		},
		"UnappliedLoweringDrainedIsApplied": {
			in: func(t *testing.T) Inputs {
				return updatingAt(t, old, next, 2, rolling(1, v1alpha1.RollingPodWaitForPodToBeUpdated))
			},
			sig:       Signals{StepDrain: drained},
			wantPhase: "updating", wantPartition: 1, wantStep: v1alpha1.RollingPodWaitForPodToBeUpdated,
		},
		"FailingCheckHolds": {
			in: func(t *testing.T) Inputs {
				n := next
				n.Analysis = &v1alpha1.RolloutCheck{PeriodSeconds: 10, SuccessThreshold: 1, Query: v1alpha1.PrometheusQuery{Expr: "up", URL: "http://prom:9090"}}
				return updatingAt(t, old, n, 2, rolling(2, v1alpha1.RollingPodWaitForChecks))
			},
			sig:       Signals{StepCheck: &promcheck.Outcome{Message: "returned no data"}, StepDrain: drained},
			wantPhase: "updating", wantPartition: 2, wantStep: v1alpha1.RollingPodWaitForChecks,
			wantEvents: []string{"PhasedRolloutCheckFailed"},
		},
		"LastPodDoneEndsStable": {
			in: func(t *testing.T) Inputs {
				in := updatingAt(t, old, next, 0, rolling(0, v1alpha1.RollingPodWaitForPodToBeUpdated))
				observedPhased(t, &in, next, 0, "rev-b", "rev-b")
				return in
			},
			wantPhase: "stable", wantPartition: 3,
			wantEvents: []string{"PhasedRolloutCompleted"},
		},
		"StaleStatefulSetStatusDoesNotEnd": {
			in: func(t *testing.T) Inputs {
				// The template was just applied; the controller has not
				// written the StatefulSet's status yet, and the last update
				// ended: nothing may end this one.
				updated := &v1alpha1.PhasedRolloutStatus{Phase: v1alpha1.PhasedRolloutUpdated, UpdateRevision: "rev-a"}
				in := updatingAt(t, old, next, 3, updated)
				observedPhased(t, &in, next, 3, "rev-a", "rev-a")
				obs := in.Observed[resourceName(0, suffixStatefulSet)]
				_ = unstructured.SetNestedField(obs.m, int64(2), "metadata", "generation")
				return in
			},
			wantPhase: "updating", wantPartition: 3,
		},
		"StandardRollingUpdateHandsOver": {
			in: func(t *testing.T) Inputs {
				n := next
				n.StandardRollingUpdate = true
				return updatingAt(t, old, n, 3, rolling(3, v1alpha1.RollingPodWaitForDrain))
			},
			wantPhase: "updating", wantPartition: 0,
			wantEvents: []string{"PhasedRolloutSuspended"},
		},
		"StandardRollingUpdateEnds": {
			in: func(t *testing.T) Inputs {
				n := next
				n.StandardRollingUpdate = true
				in := updatingAt(t, old, n, 0, &v1alpha1.PhasedRolloutStatus{Phase: v1alpha1.PhasedRolloutSuspended, UpdateRevision: "rev-a"})
				observedPhased(t, &in, n, 0, "rev-b", "rev-b")
				return in
			},
			wantPhase: "stable", wantPartition: 3,
		},
		"TopologyChangeMidUpdateRollsBlueGreen": {
			in: func(t *testing.T) Inputs {
				in := updatingAt(t, old, next, 2, rolling(2, v1alpha1.RollingPodWaitForDrain))
				in.Spec = phasedSpec("engine:4.30", 4)
				return in
			},
			wantPhase: "creating", wantPartition: 3, wantStep: v1alpha1.RollingPodWaitForDrain,
			wantEvents: []string{"NewGeneration"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Compute(tc.in(t), tc.sig, testNow)
			s := summarize(p)
			if s.Phase != tc.wantPhase || !cmp.Equal(s.Events, tc.wantEvents) {
				t.Fatalf("phase %s events %v; want %s %v", s.Phase, s.Events, tc.wantPhase, tc.wantEvents)
			}
			if got, _ := stsPartition(t, p); got != tc.wantPartition {
				t.Errorf("rendered partition %d, want %d", got, tc.wantPartition)
			}
			var step v1alpha1.RollingPodPhase
			if st := p.Status.PhasedRollout; st != nil && st.RollingPodStatus != nil {
				step = st.RollingPodStatus.Status
			}
			if step != tc.wantStep {
				t.Errorf("step %q, want %q (status %+v)", step, tc.wantStep, p.Status.PhasedRollout)
			}
			if s.Active != 0 {
				t.Errorf("active generation %d, want 0", s.Active)
			}
			if tc.wantTTL != 0 && p.TTL != tc.wantTTL {
				t.Errorf("requeue after %s, want %s", p.TTL, tc.wantTTL)
			}
		})
	}
}

// The rendered StatefulSet of a phased engine holds every pod, and a
// graceful engine's is rendered as before.
func TestPhasedRenderHoldsEveryPod(t *testing.T) {
	in := stableAt(t, 0, phasedSpec("engine:4.30", 3))
	sts := in.Renderings[0].Objects.StatefulSet
	var s appsv1.StatefulSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sts, &s); err != nil {
		t.Fatal(err)
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru == nil || ru.Partition == nil || *ru.Partition != 3 {
		t.Errorf("phased StatefulSet update strategy %+v, want partition 3", s.Spec.UpdateStrategy)
	}
	if s.Annotations[AnnotationTemplateHash] == "" {
		t.Errorf("phased StatefulSet has no %s annotation", AnnotationTemplateHash)
	}
	g := stableAt(t, 0, imageSpec("engine:4.30")).Renderings[0].Objects.StatefulSet
	if _, ok, _ := unstructured.NestedFieldNoCopy(g, "spec", "updateStrategy"); ok {
		t.Errorf("a graceful engine's StatefulSet got an update strategy")
	}
}

func desiredMap(d DesiredObject) map[string]any {
	if d.Struct != nil {
		return d.Struct.AsMap()
	}
	return d.Object
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A phased engine at rest whose StatefulSet holds pods on another revision
// than its template's (an update that ended early) resumes the update
// rather than resting on them.
func TestUnrolledAtRestResumes(t *testing.T) {
	spec := phasedSpec("engine:4.30", 3)
	in := stableAt(t, 0, spec)
	observedPhased(t, &in, spec, 3, "rev-a", "rev-b")
	in.RolledPod = nil
	s := summarize(Compute(in, Signals{}, testNow))
	if s.Phase != v1alpha1.EnginePhaseUpdating || !cmp.Equal(s.Events, []string{"UpdatingInPlace"}) || s.ObservedGeneration == in.Claim.Generation {
		t.Errorf("phase %s events %v observedGeneration %d: want updating, UpdatingInPlace, not published", s.Phase, s.Events, s.ObservedGeneration)
	}
	observedPhased(t, &in, spec, 3, "rev-b", "rev-b")
	if s := summarize(Compute(in, Signals{}, testNow)); s.Phase != v1alpha1.EnginePhaseStable {
		t.Errorf("a settled StatefulSet: phase %s, want stable", s.Phase)
	}
}

// rollout: phased on the class applies to its engines: an edit of the
// class's template updates them in place, and an engine's own rollout
// overrides it.
func TestClassPhasedRollout(t *testing.T) {
	for name, tc := range map[string]struct {
		engineRollout v1alpha1.RolloutStrategy
		wantPhase     v1alpha1.EnginePhase
		wantCurrent   int
	}{
		"InheritsPhased":    {"", "updating", 0},
		"EngineOverridesIt": {v1alpha1.RolloutGraceful, "creating", 1},
	} {
		t.Run(name, func(t *testing.T) {
			spec := imageSpec("engine:4.30")
			spec.EngineClassRef = classRef("big")
			spec.Rollout = tc.engineRollout
			class := func(zone string) ClassRef {
				c := foundClass("big", nodeSelectorTemplate(zone))
				c.Spec.Rollout = v1alpha1.RolloutPhased
				return c
			}
			in := testInputs(t, v1alpha1.EnginePhaseStable, 0, 0)
			in.Spec, in.Class = spec, class("a")
			withGeneration(&in, 0, spec, pods{2, 2})
			withRoute(&in, 0)
			in.Class = class("b")
			s := summarize(Compute(in, Signals{}, testNow))
			if s.Phase != tc.wantPhase || s.Current != tc.wantCurrent {
				t.Errorf("a class template edit: phase %s current %d, want %s %d (events %v)", s.Phase, s.Current, tc.wantPhase, tc.wantCurrent, s.Events)
			}
		})
	}
}

// A hostile status.phasedRollout (anyone who can write the composite's
// status can write it) neither panics nor lets more than one pod go: the
// step repairs it and renders a partition within [observed-1, replicas].
func TestUpdatingHostileStatus(t *testing.T) {
	old, next := phasedSpec("engine:4.29", 3), phasedSpec("engine:4.30", 3)
	for name, st := range map[string]*v1alpha1.PhasedRolloutStatus{
		"NegativePartition": {Phase: v1alpha1.PhasedRolloutRolling, UpdateRevision: "rev-b", RollingPodStatus: &v1alpha1.RollingPodStatus{Partition: -5, Status: v1alpha1.RollingPodWaitForDrain}},
		"PartitionFarBelow": {Phase: v1alpha1.PhasedRolloutRolling, UpdateRevision: "rev-b", RollingPodStatus: &v1alpha1.RollingPodStatus{Partition: 0, Status: v1alpha1.RollingPodWaitForDrain, ConsecutiveSuccessfulChecks: 1 << 30}},
		"GarbageTimes": {Phase: v1alpha1.PhasedRolloutRolling, UpdateRevision: "rev-b", RolloutStartTime: "yesterday",
			RollingPodStatus: &v1alpha1.RollingPodStatus{Partition: 3, AnalysisStartTime: "not a time", LastCheckTime: "9999-99-99"}},
		"UnknownPhase": {Phase: "finished", UpdateRevision: "rev-b"},
	} {
		t.Run(name, func(t *testing.T) {
			in := updatingAt(t, old, next, 3, st)
			p := Compute(in, Signals{StepDrain: &podDrain{Ordinal: 2, Verdict: scrape.Verdict{Drained: true}}}, testNow)
			if got, _ := stsPartition(t, p); got < 2 || got > 3 {
				t.Errorf("rendered partition %d from a StatefulSet at partition 3: want 2 or 3", got)
			}
			if p.Status.Phase != v1alpha1.EnginePhaseUpdating {
				t.Errorf("phase %s, want updating", p.Status.Phase)
			}
		})
	}
}
