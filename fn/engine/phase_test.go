package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

const stableTTL = 30 * time.Minute // the input's default

func baseSpec() v1alpha1.FireboltEngineSpec {
	return v1alpha1.FireboltEngineSpec{InstanceRef: "inst", Replicas: 2}
}

func imageSpec(image string) v1alpha1.FireboltEngineSpec {
	s := baseSpec()
	s.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "engine", Image: image}}}}
	return s
}

func replicasSpec(n int32) v1alpha1.FireboltEngineSpec {
	s := baseSpec()
	s.Replicas = n
	return s
}

func classRef(name string) *string { return &name }

func foundClass(name string, tpl corev1.PodTemplateSpec) ClassRef {
	return ClassRef{Name: name, Resolved: true, Found: true, SpecResolved: true, Published: true, Spec: v1alpha1.FireboltEngineClassSpec{Template: tpl}}
}

func nodeSelectorTemplate(zone string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"zone": zone}}}
}

// stableAt is a stable engine serving generation n, rendered from spec,
// with all pods ready.
func stableAt(t *testing.T, n int, spec v1alpha1.FireboltEngineSpec) Inputs {
	in := testInputs(t, v1alpha1.EnginePhaseStable, n, n)
	in.Spec = spec
	withGeneration(&in, n, spec, pods{int64(spec.Replicas), int64(spec.Replicas)})
	withRoute(&in, n)
	return in
}

// rollingAt is an engine that serves generation a and is in phase, with
// generation a+1 current and fully ready.
func rollingAt(t *testing.T, phase v1alpha1.EnginePhase, a int, oldSpec, newSpec v1alpha1.FireboltEngineSpec) Inputs {
	in := testInputs(t, phase, a+1, a)
	in.Spec = newSpec
	withGeneration(&in, a, oldSpec, pods{int64(oldSpec.Replicas), int64(oldSpec.Replicas)})
	withGeneration(&in, a+1, newSpec, pods{int64(newSpec.Replicas), int64(newSpec.Replicas)})
	withRoute(&in, a)
	return in
}

// drainingAt is an engine that switched from generation d to d+1 and is in
// phase (draining or cleaning).
func drainingAt(t *testing.T, phase v1alpha1.EnginePhase, d int, oldSpec, newSpec v1alpha1.FireboltEngineSpec) Inputs {
	in := rollingAt(t, phase, d, oldSpec, newSpec)
	in.Status.ActiveGeneration = d + 1
	in.Status.DrainingGeneration = intp(d)
	withRoute(&in, d+1)
	return in
}

func TestComputeTransitions(t *testing.T) {
	v2 := imageSpec("ghcr.io/firebolt-db/engine:v2")
	v3 := imageSpec("ghcr.io/firebolt-db/engine:v3")
	notReady := func(in *Inputs) { in.Instance.Status.MetadataReady = false }

	cases := map[string]struct {
		in   func(t *testing.T) Inputs
		sig  Signals
		want summary
	}{
		"FirstReconcileInitialisesAndRecords": {
			in: func(t *testing.T) Inputs { return testInputs(t, "", 0, 0) },
			// Initialised and the first generation recorded in one status
			// write; its objects follow on the next call.
			want: summary{
				Phase: "creating", Current: 0, Active: -1, ObservedGeneration: 2, Renderings: []int{0},
				Resources: map[resource.Name]bool{}, Route: -1,
				EngineReady: "False/Initializing", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"FirstReconcileReportsAMissingInstance": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "", 0, 0)
				in.Instance = InstanceRef{Name: "inst", Resolved: true}
				return in
			},
			want: summary{
				Phase: "creating", Current: 0, Active: -1, ObservedGeneration: 2,
				Resources: map[resource.Name]bool{}, Route: -1,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"CreatingRecordsTheRenderingBeforeAnyObject": {
			in: func(t *testing.T) Inputs { return testInputs(t, "creating", 0, -1) },
			want: summary{
				Phase: "creating", Current: 0, Active: -1, ObservedGeneration: 2, Renderings: []int{0},
				Resources: map[resource.Name]bool{}, Route: -1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: time.Second,
			},
		},
		"CreatingReturnsTheRecordedGeneration": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withRecording(&in, 0, baseSpec())
				return in
			},
			// The routing Service follows once the StatefulSet exists.
			want: summary{
				Phase: "creating", Current: 0, Active: -1, ObservedGeneration: 2, Renderings: []int{0},
				Resources: gen(0, false, true), Route: -1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: 30 * time.Second,
			},
		},
		"CreatingWaitsForPods": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 1})
				return in
			},
			want: summary{
				Phase: "creating", Current: 0, Active: -1, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, false, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: 30 * time.Second,
			},
		},
		"CreatingSwitchesOnceAllPodsAreReady": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				return in
			},
			want: summary{
				Phase: "switching", Current: 0, Active: -1, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: time.Second,
			},
		},
		"CreatingKeepsTheActiveGenerationAndItsRoute": {
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "creating", 0, baseSpec(), v2)
				in.Observed[resourceName(1, suffixStatefulSet)] = observe(in.Renderings[1].Objects.StatefulSet, 1, suffixStatefulSet, pods{1, 0})
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, false, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: 30 * time.Second,
			},
		},
		"CreatingAbandonsACreatedGenerationOnSpecChange": {
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "creating", 0, baseSpec(), v2)
				in.Spec = v3
				return in
			},
			want: summary{
				Phase: "creating", Current: 2, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 2},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Abandoned"}, TTL: time.Second,
			},
		},
		"CreatingAbandonsARecordedGenerationBeforeItsObjectsExist": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Status.Phase, in.Status.CurrentGeneration = "creating", 1
				withRecording(&in, 1, v2)
				in.Spec = v3
				return in
			},
			want: summary{
				Phase: "creating", Current: 2, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 2},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Abandoned"}, TTL: time.Second,
			},
		},
		"CreatingAbandonsObjectsWithoutARecording": {
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "creating", 0, baseSpec(), v2)
				delete(in.Renderings, 1)
				in.Status.Renderings = statusRenderings(in.Renderings)
				return in
			},
			want: summary{
				Phase: "creating", Current: 2, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 2},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Abandoned"}, TTL: time.Second,
			},
		},
		"CreatingDropsAnAbandonedGenerationOnceTheStatusMovedOn": {
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "creating", 0, baseSpec(), v2)
				in.Status.CurrentGeneration = 2
				delete(in.Renderings, 1)
				withRecording(&in, 2, v2)
				return in
			},
			want: summary{
				Phase: "creating", Current: 2, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 2},
				Resources: merge(gen(0, true, true), gen(2, false, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: 30 * time.Second,
			},
		},
		"CreatingGatedByInstanceKeepsOnlyWhatExists": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Status.Phase, in.Status.CurrentGeneration = "creating", 1
				rec := withRecording(&in, 1, v2)
				in.Observed[resourceName(1, suffixConfig)] = observe(rec.Objects.ConfigMap, 1, suffixConfig, pods{})
				in.Spec = v3
				notReady(&in)
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), route(true), map[resource.Name]bool{"g1-config": true}), Route: 0,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady", TTL: 30 * time.Second,
			},
		},
		"CreatingGatedByMissingClass": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				in.Spec.EngineClassRef = classRef("big")
				in.Class = ClassRef{Name: "big", SpecResolved: true, Resolved: true}
				return in
			},
			want: summary{
				Phase: "creating", Current: 0, Active: -1, ObservedGeneration: 2,
				Resources: binding("big", true), Route: -1,
				EngineReady: "False/FireboltEngineClassNotFound", InstanceReady: "True/InstanceReady", TTL: 30 * time.Second,
			},
		},
		"CreatingGatedByRejectedTemplateKeepsExistingGenerations": {
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "creating", 0, baseSpec(), v2)
				in.Spec.Template = in.Spec.Template.DeepCopy()
				in.Spec.Template.Spec.TerminationGracePeriodSeconds = ptrTo[int64](5)
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 0,
				EngineReady: "False/TemplateRejected", InstanceReady: "True/InstanceReady", TTL: 30 * time.Second,
			},
		},
		"ScaleToZeroIsTriviallyReady": {
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "creating", 0, baseSpec(), replicasSpec(0))
				return in
			},
			want: summary{
				Phase: "switching", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: time.Second,
			},
		},
		"StableWithoutDriftRests": {
			in: func(t *testing.T) Inputs { return stableAt(t, 0, baseSpec()) },
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 3, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "True/EngineReady", InstanceReady: "True/InstanceReady", Ready: true, TTL: stableTTL,
			},
		},
		"StableReportsPodsNotReady": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 3, baseSpec())
				in.Observed[resourceName(3, suffixStatefulSet)] = observe(in.Renderings[3].Objects.StatefulSet, 3, suffixStatefulSet, pods{2, 1})
				return in
			},
			want: summary{
				Phase: "stable", Current: 3, Active: 3, ObservedGeneration: 3, Renderings: []int{3},
				Resources: merge(gen(3, false, true), route(true)), Route: 3,
				EngineReady: "False/PodsNotReady", InstanceReady: "True/InstanceReady", TTL: stableTTL,
			},
		},
		"StableRefinesPodsNotReadyWithAStatefulSetWarning": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 3, baseSpec())
				in.Observed[resourceName(3, suffixStatefulSet)] = observe(in.Renderings[3].Objects.StatefulSet, 3, suffixStatefulSet, pods{1, 1})
				return in
			},
			sig: Signals{Warning: &StatefulSetWarning{StatefulSet: "demo-g3", Reason: "FailedCreate", Message: "quota exceeded", Count: 4}},
			want: summary{
				Phase: "stable", Current: 3, Active: 3, ObservedGeneration: 3, Renderings: []int{3},
				Resources: merge(gen(3, false, true), route(true)), Route: 3,
				EngineReady: "False/FailedCreate", InstanceReady: "True/InstanceReady", TTL: stableTTL,
			},
		},
		"StableIgnoresAWarningOnceAllPodsExist": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 3, baseSpec())
				in.Observed[resourceName(3, suffixStatefulSet)] = observe(in.Renderings[3].Objects.StatefulSet, 3, suffixStatefulSet, pods{2, 1})
				return in
			},
			sig: Signals{Warning: &StatefulSetWarning{StatefulSet: "demo-g3", Reason: "FailedCreate", Message: "old", Count: 1}},
			want: summary{
				Phase: "stable", Current: 3, Active: 3, ObservedGeneration: 3, Renderings: []int{3},
				Resources: merge(gen(3, false, true), route(true)), Route: 3,
				EngineReady: "False/PodsNotReady", InstanceReady: "True/InstanceReady", TTL: stableTTL,
			},
		},
		"StableDriftWritesOnlyTheIntent": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec = v2
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"StableDriftOnAFunctionInputChange": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Config.Images.Engine = "ghcr.io/firebolt-db/engine:4.30"
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"StableDriftOnAClassEdit": {
			in: func(t *testing.T) Inputs {
				s := baseSpec()
				s.EngineClassRef = classRef("big")
				in := testInputs(t, "stable", 0, 0)
				in.Spec = s
				in.Class = foundClass("big", nodeSelectorTemplate("a"))
				withGeneration(&in, 0, s, pods{2, 2})
				withRoute(&in, 0)
				in.Class = foundClass("big", nodeSelectorTemplate("b"))
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), route(true), binding("big", true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"StableDriftOnAClassReference": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec.EngineClassRef = classRef("big")
				in.Class = foundClass("big", corev1.PodTemplateSpec{})
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), route(true), binding("big", true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"StablePolicyChangesNeverRoll": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec.Rollout = v1alpha1.RolloutRecreate
				in.Spec.DrainCheckEnabled = ptrTo(false)
				in.Spec.DrainCheckInterval = &metav1.Duration{Duration: time.Minute}
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 3, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "True/EngineReady", InstanceReady: "True/InstanceReady", Ready: true, TTL: stableTTL,
			},
		},
		"StableWithoutARecordingRollsFromSanitisedObjects": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Renderings = map[int]Recording{}
				in.Status.Renderings = nil
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{1},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"StableGatedByInstanceKeepsServing": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec = v2
				notReady(&in)
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady", TTL: 10 * time.Second,
			},
		},
		"StableGatedByInstanceRecreatesNothing": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				delete(in.Observed, resourceName(0, suffixConfig))
				notReady(&in)
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(map[resource.Name]bool{"g0-headless": true, "g0-statefulset": true}, route(true)), Route: 0,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady", TTL: 10 * time.Second,
			},
		},
		"StableRematerialisesAMissingObject": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				delete(in.Observed, resourceName(0, suffixConfig))
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 3, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "True/EngineReady", InstanceReady: "True/InstanceReady", Ready: true, TTL: stableTTL,
			},
		},
		"StableTemplateRejectedKeepsServing": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec = imageSpec("x")
				in.Spec.Template.Spec.Containers[0].Command = []string{"sh"}
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/TemplateRejected", InstanceReady: "True/InstanceReady", TTL: 10 * time.Second,
			},
		},
		"StableUISidecarWithoutImageKeepsServing": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec.UISidecar = ptrTo(true)
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/UISidecarImageNotSet", InstanceReady: "True/InstanceReady", TTL: 10 * time.Second,
			},
		},
		"StoppedIsStableAtZeroReplicas": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 2, replicasSpec(0))
				in.Status.Phase = "stopped"
				return in
			},
			want: summary{
				Phase: "stopped", Current: 2, Active: 2, ObservedGeneration: 3, Renderings: []int{2},
				Resources: merge(gen(2, true, true), route(true)), Route: 2,
				EngineReady: "False/Stopped", InstanceReady: "True/InstanceReady", TTL: stableTTL,
			},
		},
		"StoppedResumesWithANewGeneration": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 2, replicasSpec(0))
				in.Status.Phase = "stopped"
				in.Spec = replicasSpec(3)
				return in
			},
			want: summary{
				Phase: "creating", Current: 3, Active: 2, ObservedGeneration: 2, Renderings: []int{2, 3},
				Resources: merge(gen(2, true, true), route(true)), Route: 2,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"StoppedGatedReportsTheInstanceFirst": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 2, replicasSpec(0))
				in.Status.Phase = "stopped"
				notReady(&in)
				return in
			},
			want: summary{
				Phase: "stopped", Current: 2, Active: 2, ObservedGeneration: 2, Renderings: []int{2},
				Resources: merge(gen(2, true, true), route(true)), Route: 2,
				EngineReady: "False/InstanceNotReady", InstanceReady: "False/InstanceNotReady", TTL: 10 * time.Second,
			},
		},
		"SwitchingPointsTheRouteAtTheNewGeneration": {
			in: func(t *testing.T) Inputs { return rollingAt(t, "switching", 0, baseSpec(), v2) },
			want: summary{
				Phase: "switching", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: time.Second,
			},
		},
		"SwitchingRecordsTheSwitchOnceObserved": {
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "switching", 0, baseSpec(), v2)
				withRoute(&in, 1)
				return in
			},
			want: summary{
				Phase: "draining", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Switched"}, TTL: time.Second,
			},
		},
		"SwitchingFirstDeployEndsStable": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "switching", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withRoute(&in, 0)
				return in
			},
			want: summary{
				Phase: "stable", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "True/EngineReady", InstanceReady: "True/InstanceReady", Ready: true,
				Events: []string{"Switched"}, TTL: time.Second,
			},
		},
		"SwitchingFirstDeployAtZeroEndsStopped": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "switching", 0, -1)
				in.Spec = replicasSpec(0)
				withGeneration(&in, 0, in.Spec, pods{})
				withRoute(&in, 0)
				return in
			},
			want: summary{
				Phase: "stopped", Current: 0, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Stopped", InstanceReady: "True/InstanceReady",
				Events: []string{"Switched"}, TTL: time.Second,
			},
		},
		"SwitchingIgnoresTheInstanceAndSpecChanges": {
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "switching", 0, baseSpec(), v2)
				in.Spec = v3
				notReady(&in)
				return in
			},
			want: summary{
				Phase: "switching", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "False/InstanceNotReady", TTL: time.Second,
			},
		},
		"SwitchingToAGenerationThatWasNeverCreatedCreatesIt": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Status.Phase, in.Status.CurrentGeneration = "switching", 1
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0},
				Resources: merge(gen(0, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: time.Second,
			},
		},
		"DrainingWaitsForBusyPods": {
			in:  func(t *testing.T) Inputs { return drainingAt(t, "draining", 0, baseSpec(), v2) },
			sig: Signals{Drain: &scrape.Verdict{Message: "pod demo-g0-0: 2 running, 0 suspended queries"}},
			want: summary{
				Phase: "draining", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: 5 * time.Second,
			},
		},
		"DrainingReportsAFailingCheck": {
			in:  func(t *testing.T) Inputs { return drainingAt(t, "draining", 0, baseSpec(), v2) },
			sig: Signals{Drain: &scrape.Verdict{Failing: true, Message: "pod demo-g0-1: cannot scrape metrics: unexpected HTTP status 503"}},
			want: summary{
				Phase: "draining", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/DrainCheckFailing", InstanceReady: "True/InstanceReady", TTL: 5 * time.Second,
			},
		},
		"DrainingWithoutAVerdictNeverDeletes": {
			in: func(t *testing.T) Inputs { return drainingAt(t, "draining", 0, baseSpec(), v2) },
			want: summary{
				Phase: "draining", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/DrainCheckFailing", InstanceReady: "True/InstanceReady", TTL: 5 * time.Second,
			},
		},
		"DrainingMovesOnOnceDrained": {
			in:  func(t *testing.T) Inputs { return drainingAt(t, "draining", 0, baseSpec(), v2) },
			sig: Signals{Drain: &scrape.Verdict{Drained: true}},
			want: summary{
				Phase: "cleaning", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Drained"}, TTL: time.Second,
			},
		},
		"DrainingSkippedForRecreate": {
			in: func(t *testing.T) Inputs {
				in := drainingAt(t, "draining", 0, baseSpec(), v2)
				in.Spec.Rollout = v1alpha1.RolloutRecreate
				return in
			},
			want: summary{
				Phase: "cleaning", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Drained"}, TTL: time.Second,
			},
		},
		"DrainingSkippedWhenTheClassDisablesTheCheck": {
			in: func(t *testing.T) Inputs {
				s := v2
				s.EngineClassRef = classRef("dev")
				in := testInputs(t, "draining", 1, 1)
				in.Class = foundClass("dev", corev1.PodTemplateSpec{})
				in.Class.Spec.DrainCheckEnabled = ptrTo(false)
				in.Spec = s
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withGeneration(&in, 1, s, pods{2, 2})
				in.Status.DrainingGeneration = intp(0)
				withRoute(&in, 1)
				return in
			},
			want: summary{
				Phase: "cleaning", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true), binding("dev", true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Drained"}, TTL: time.Second,
			},
		},
		"DrainingUsesTheClassInterval": {
			in: func(t *testing.T) Inputs {
				s := v2
				s.EngineClassRef = classRef("dev")
				in := testInputs(t, "draining", 1, 1)
				in.Class = foundClass("dev", corev1.PodTemplateSpec{})
				in.Class.Spec.DrainCheckInterval = &metav1.Duration{Duration: 17 * time.Second}
				in.Spec = s
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withGeneration(&in, 1, s, pods{2, 2})
				in.Status.DrainingGeneration = intp(0)
				withRoute(&in, 1)
				return in
			},
			sig: Signals{Drain: &scrape.Verdict{Message: "busy"}},
			want: summary{
				Phase: "draining", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true), binding("dev", true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady", TTL: 17 * time.Second,
			},
		},
		"DrainingAGoneGenerationIsDrainedAndNotRecreated": {
			in: func(t *testing.T) Inputs {
				in := drainingAt(t, "draining", 0, baseSpec(), v2)
				delete(in.Observed, resourceName(0, suffixStatefulSet))
				return in
			},
			want: summary{
				Phase: "cleaning", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(1, true, true), route(true), map[resource.Name]bool{"g0-config": true, "g0-headless": true}), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Drained"}, TTL: time.Second,
			},
		},
		"DrainingIgnoresSpecChangesAndTheInstance": {
			in: func(t *testing.T) Inputs {
				in := drainingAt(t, "draining", 0, baseSpec(), v2)
				in.Spec = v3
				notReady(&in)
				return in
			},
			sig: Signals{Drain: &scrape.Verdict{Message: "busy"}},
			want: summary{
				Phase: "draining", Current: 1, Active: 1, Draining: intp(0), ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Rolling", InstanceReady: "False/InstanceNotReady", TTL: 5 * time.Second,
			},
		},
		"CleaningLeavesTheOldGenerationOut": {
			in: func(t *testing.T) Inputs { return drainingAt(t, "cleaning", 0, baseSpec(), v2) },
			want: summary{
				Phase: "stable", Current: 1, Active: 1, ObservedGeneration: 2, Renderings: []int{1},
				Resources: merge(gen(1, true, true), route(true)), Route: 1,
				EngineReady: "True/EngineReady", InstanceReady: "True/InstanceReady", Ready: true,
				Events: []string{"Cleaned"}, TTL: time.Second,
			},
		},
		"CleaningEndsStoppedAtZeroReplicas": {
			in: func(t *testing.T) Inputs { return drainingAt(t, "cleaning", 0, baseSpec(), replicasSpec(0)) },
			want: summary{
				Phase: "stopped", Current: 1, Active: 1, ObservedGeneration: 2, Renderings: []int{1},
				Resources: merge(gen(1, true, true), route(true)), Route: 1,
				EngineReady: "False/Stopped", InstanceReady: "True/InstanceReady",
				Events: []string{"Cleaned"}, TTL: time.Second,
			},
		},
		"CleaningNeverStartsAGeneration": {
			in: func(t *testing.T) Inputs {
				in := drainingAt(t, "cleaning", 0, baseSpec(), v2)
				in.Spec = v3
				return in
			},
			want: summary{
				Phase: "stable", Current: 1, Active: 1, ObservedGeneration: 2, Renderings: []int{1},
				Resources: merge(gen(1, true, true), route(true)), Route: 1,
				EngineReady: "True/EngineReady", InstanceReady: "True/InstanceReady", Ready: true,
				Events: []string{"Cleaned"}, TTL: time.Second,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarize(Compute(tc.in(t), tc.sig, testNow))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compute(...): -want, +got:\n%s", diff)
			}
		})
	}
}

// TestRestingTTL: a resting engine is called again only after the long
// stableTTL, from the call that made it rest on: its objects are watched,
// and an event Crossplane's breaker dropped is covered by the watches-dropped
// cap (TestRunFunctionPollsWhileWatchesAreDropped), so it needs no shorter safety poll.
func TestRestingTTL(t *testing.T) {
	in := stableAt(t, 0, baseSpec())
	first := Compute(in, Signals{}, testNow)
	in.Status = first.Status
	for _, tc := range []struct {
		after time.Duration
		want  time.Duration
	}{
		{after: 0, want: stableTTL},
		{after: time.Minute, want: stableTTL},
		{after: 10 * time.Minute, want: stableTTL},
		{after: 3 * time.Hour, want: stableTTL},
	} {
		p := Compute(in, Signals{}, testNow.Add(tc.after))
		if p.TTL != tc.want {
			t.Errorf("%s after the last status change: ttl %s, want %s", tc.after, p.TTL, tc.want)
		}
		if p.Status.LastReconciled == nil || !p.Status.LastReconciled.Equal(first.Status.LastReconciled) {
			t.Errorf("%s after: lastReconciled moved to %v, a write that changes nothing", tc.after, p.Status.LastReconciled)
		}
	}
}

// TestBreakerReprobe: while Crossplane's breaker drops the composite's
// events a resting engine is polled every 5 s, and Crossplane closes the
// breaker only on an event arriving after its open duration. So once the
// status has not changed for breakerReprobe the engine stamps
// lastReconciled, a write whose watch event closes the breaker, and then
// keeps it until another breakerReprobe has passed: no write on every poll.
func TestBreakerReprobe(t *testing.T) {
	in := stableAt(t, 0, baseSpec())
	first := Compute(in, Signals{}, testNow)
	in.Status = first.Status
	in.Breaker.Open = true
	rested := first.Status.LastReconciled.Time
	for _, tc := range []struct {
		after time.Duration
		stamp bool
	}{
		{after: 5 * time.Second},
		{after: breakerReprobe - time.Second},
		{after: breakerReprobe, stamp: true},
		{after: time.Hour, stamp: true},
	} {
		now := rested.Add(tc.after)
		p := Compute(in, Signals{}, now)
		if p.TTL != ttlWatchesDropped {
			t.Errorf("%s after the last status change: ttl %s, want %s", tc.after, p.TTL, ttlWatchesDropped)
		}
		want := rested
		if tc.stamp {
			want = now.UTC().Truncate(time.Second)
		}
		if got := p.Status.LastReconciled.Time; !got.Equal(want) {
			t.Errorf("%s after the last status change: lastReconciled %s, want %s", tc.after, got, want)
		}
		if !tc.stamp {
			continue
		}
		// The stamped status is the next call's: nothing more to write.
		next := in
		next.Status = p.Status
		if q := Compute(next, Signals{}, now.Add(ttlWatchesDropped)); !q.Status.LastReconciled.Equal(p.Status.LastReconciled) {
			t.Errorf("%s after: the next poll moved lastReconciled again, to %s", tc.after, q.Status.LastReconciled)
		}
	}
	// The breaker opened a second after the status last changed, so the
	// stamp made 5m after that change came a second before its open
	// duration ended, and its event left it open: once the duration is
	// over, the engine stamps once more.
	in.Breaker.OpenedAt = rested.Add(time.Second)
	early := Compute(in, Signals{}, rested.Add(breakerReprobe))
	again := in
	again.Status = early.Status
	now := rested.Add(breakerReprobe + 2*time.Second)
	if got := Compute(again, Signals{}, now).Status.LastReconciled.Time; !got.Equal(now) {
		t.Errorf("open duration over 2s after a stamp made a second before it ended: lastReconciled %s, want %s", got, now)
	}
	again.Status.LastReconciled = &metav1.Time{Time: now}
	if got := Compute(again, Signals{}, now.Add(ttlWatchesDropped)).Status.LastReconciled.Time; !got.Equal(now) {
		t.Errorf("the poll after that stamp moved lastReconciled again, to %s", got)
	}
	in.Breaker.OpenedAt = time.Time{}
	// With the breaker closed nothing is stamped, however long it rested.
	in.Breaker.Open = false
	if p := Compute(in, Signals{}, rested.Add(time.Hour)); !p.Status.LastReconciled.Time.Equal(rested) {
		t.Errorf("breaker closed: lastReconciled moved to %s", p.Status.LastReconciled)
	}
}
