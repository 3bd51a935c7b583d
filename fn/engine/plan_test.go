package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// TestOlderGenerationsAreReturnedAsRecorded: while a new generation rolls
// out, the old one is returned byte for byte as it was rendered, never
// re-rendered from the new spec, class or instance.
func TestOlderGenerationsAreReturnedAsRecorded(t *testing.T) {
	in := rollingAt(t, "creating", 0, baseSpec(), imageSpec("ghcr.io/firebolt-db/engine:v2"))
	old := in.Renderings[0]
	in.Instance.Status.MetadataEndpoint = "moved:7000"
	in.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"zone": "b"}}}
	p := Compute(in, Signals{}, testNow)
	for _, s := range generationSuffixes {
		if diff := cmp.Diff(old.Objects.bySuffix(s), p.Resources[resourceName(0, s)].Object); diff != "" {
			t.Errorf("%s: -recorded, +returned:\n%s", resourceName(0, s), diff)
		}
	}
	if p.Status.Renderings[0] != (v1alpha1.GenerationRendering{Generation: 0, Hash: old.Hash, Objects: old.Encoded}) {
		t.Errorf("generation 0's recording changed: %+v", p.Status.Renderings[0])
	}
}

// TestApiServerDefaultsAreNotDrift: the observed StatefulSet carries every
// field the API server defaults and Crossplane adds; drift compares
// renderings, so none of it counts.
func TestApiServerDefaultsAreNotDrift(t *testing.T) {
	in := stableAt(t, 5, baseSpec())
	sts := &unstructured.Unstructured{Object: in.Observed[resourceName(5, suffixStatefulSet)].m}
	sts.SetLabels(map[string]string{"crossplane.io/composite": "demo-x7k2p", LabelEngine: "demo", LabelGeneration: "5"})
	sts.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "compute.firebolt.io/v1alpha1", Kind: "XFireboltEngine", Name: "demo-x7k2p", UID: "xr-uid"}})
	sts.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "apiextensions.crossplane.io/composed"}})
	sts.Object["spec"].(map[string]any)["minReadySeconds"] = int64(0)
	tpl := sts.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	c := tpl["containers"].([]any)[0].(map[string]any)
	c["terminationMessagePath"] = "/dev/termination-log"
	c["terminationMessagePolicy"] = "File"
	c["readinessProbe"].(map[string]any)["successThreshold"] = int64(1)

	got := summarize(Compute(in, Signals{}, testNow))
	if got.Phase != v1alpha1.EnginePhaseStable || got.Current != 5 || len(got.Events) != 0 {
		t.Errorf("defaulted observed StatefulSet: want stable at generation 5 without events, got %+v", got)
	}
}

func TestLastReconciled(t *testing.T) {
	earlier := metav1.NewTime(testNow.Add(-time.Hour))
	now := metav1.NewTime(testNow)
	cases := map[string]struct {
		in   func(t *testing.T) Inputs
		want *metav1.Time
	}{
		"KeptWhenNothingChanges": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Status.ObservedGeneration = in.Claim.Generation
				return in
			},
			want: &earlier,
		},
		"StampedOnATransition": {
			in:   func(t *testing.T) Inputs { return drainingAt(t, "cleaning", 0, baseSpec(), replicasSpec(3)) },
			want: &now,
		},
		"StampedWhenRenderingsChange": {
			in:   func(t *testing.T) Inputs { return testInputs(t, "creating", 0, -1) },
			want: &now,
		},
		"StampedWhenMissing": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Status.ObservedGeneration = in.Claim.Generation
				in.Status.LastReconciled = nil
				return in
			},
			want: &now,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Compute(tc.in(t), Signals{}, testNow).Status.LastReconciled
			if !got.Equal(tc.want) {
				t.Errorf("lastReconciled: want %v, got %v", tc.want, got)
			}
		})
	}
}

// TestFrozenWithoutClaimLabels: without the claim's labels nothing can be
// named or placed, so everything observed is kept exactly as it is.
func TestFrozenWithoutClaimLabels(t *testing.T) {
	in := rollingAt(t, "creating", 0, baseSpec(), replicasSpec(3))
	in.Engine, in.Namespace = "", ""
	p := Compute(in, Signals{}, testNow)
	want := map[resource.Name]bool{}
	for n := range in.Observed {
		want[n] = true
	}
	if diff := cmp.Diff(want, summarize(p).Resources); diff != "" {
		t.Errorf("resources: -want, +got:\n%s", diff)
	}
	// Without the engine's name no recording can be verified: the live
	// objects are kept as observed, the recordings stay in status.
	if diff := cmp.Diff(composite.Unchanged(in.Observed["g1-statefulset"].m), p.Resources["g1-statefulset"].Object); diff != "" {
		t.Errorf("g1-statefulset should be the sanitised observed object: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(composite.Unchanged(in.Observed[RoutingServiceKey].m), p.Resources[RoutingServiceKey].Object); diff != "" {
		t.Errorf("service should be the sanitised observed object: -want, +got:\n%s", diff)
	}
	st := p.Status
	st.LastReconciled = in.Status.LastReconciled
	if diff := cmp.Diff(in.Status, st); diff != "" {
		t.Errorf("status: -want, +got:\n%s", diff)
	}
	if len(p.Requirements) != 0 || p.Ready || p.Conditions[0].Reason != ReasonClaimLabelsMissing {
		t.Errorf("want no requirements, not ready, ClaimLabelsMissing; got %v, %v, %v", p.Requirements, p.Ready, p.Conditions)
	}
}

func TestRequirements(t *testing.T) {
	own := Requirement{APIVersion: "compute.firebolt.io/v1alpha1", Kind: "FireboltEngine", Name: "demo", Namespace: "firebolt"}
	instance := Requirement{APIVersion: "v1", Kind: "ConfigMap", Name: "inst-engines", Namespace: "firebolt"}
	spec := Requirement{APIVersion: "v1", Kind: "ConfigMap", Name: "big-engineclass", Namespace: "firebolt"}
	claim := Requirement{APIVersion: "compute.firebolt.io/v1alpha1", Kind: "FireboltEngineClass", Name: "big", Namespace: "firebolt"}
	cases := map[string]struct {
		reason string
		class  ClassRef
		want   map[string]Requirement
	}{
		"ClassPublished": {
			reason: "The class is read from the ConfigMap publishing its spec, not from its claim, whose status changes on every bind.",
			class:  foundClass("big", corev1.PodTemplateSpec{}),
			want:   map[string]Requirement{"claim": own, "instance-state": instance, "class-spec": spec},
		},
		"ClassSpecNotFetchedYet": {
			reason: "Until Crossplane has looked for the ConfigMap, only it is asked for.",
			class:  ClassRef{Name: "big"},
			want:   map[string]Requirement{"claim": own, "instance-state": instance, "class-spec": spec},
		},
		"ClassSpecMissing": {
			reason: "While the ConfigMap is missing the claim is asked for too, to tell a class that has not published yet from one that does not exist.",
			class:  ClassRef{Name: "big", SpecResolved: true},
			want:   map[string]Requirement{"claim": own, "instance-state": instance, "class-spec": spec, "class": claim},
		},
		"ClassMissing": {
			reason: "A class that does not exist is watched for by its claim and its ConfigMap.",
			class:  ClassRef{Name: "big", SpecResolved: true, Resolved: true},
			want:   map[string]Requirement{"claim": own, "instance-state": instance, "class-spec": spec, "class": claim},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := stableAt(t, 0, baseSpec())
			in.Spec.EngineClassRef = classRef("big")
			in.Class = tc.class
			if diff := cmp.Diff(tc.want, Compute(in, Signals{}, testNow).Requirements); diff != "" {
				t.Errorf("%s\nrequirements: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSameStatus: statuses are the same when they are written the same,
// whether or not their values are deeply equal, lastReconciled aside.
func TestSameStatus(t *testing.T) {
	base := func() v1alpha1.FireboltEngineStatus {
		return v1alpha1.FireboltEngineStatus{
			CurrentGeneration: 1, ActiveGeneration: 1, Phase: v1alpha1.EnginePhaseStable,
			Renderings: []v1alpha1.GenerationRendering{{Generation: 1, Hash: "h1", Objects: "o1"}, {Generation: 0, Hash: "h0", Objects: "o0"}},
		}
	}
	at := metav1.NewTime(time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC))
	for name, tc := range map[string]struct {
		edit func(a, b *v1alpha1.FireboltEngineStatus)
		want bool
	}{
		"Equal":                    {edit: func(_, _ *v1alpha1.FireboltEngineStatus) {}, want: true},
		"LastReconciledAside":      {edit: func(a, _ *v1alpha1.FireboltEngineStatus) { a.LastReconciled = &at }, want: true},
		"RenderingsInAnotherOrder": {edit: func(a, _ *v1alpha1.FireboltEngineStatus) { slices.Reverse(a.Renderings) }, want: true},
		"NilAndEmptyWrittenAlike": {edit: func(a, b *v1alpha1.FireboltEngineStatus) {
			a.Renderings, b.Renderings = nil, []v1alpha1.GenerationRendering{}
		}, want: true},
		"SameTimeAnotherLocation": {edit: func(a, b *v1alpha1.FireboltEngineStatus) {
			a.AutoStop, b.AutoStop = &v1alpha1.AutoStopStatus{LastScaledAt: &at}, &v1alpha1.AutoStopStatus{LastScaledAt: &metav1.Time{Time: at.In(time.FixedZone("x", 0))}}
		}, want: true},
		"PhaseDiffers":            {edit: func(_, b *v1alpha1.FireboltEngineStatus) { b.Phase = v1alpha1.EnginePhaseCreating }, want: false},
		"RenderingHashDiffers":    {edit: func(_, b *v1alpha1.FireboltEngineStatus) { b.Renderings[0].Hash = "other" }, want: false},
		"GenerationZeroIsWritten": {edit: func(a, b *v1alpha1.FireboltEngineStatus) { a.ActiveGeneration, b.ActiveGeneration = 0, 1 }, want: false},
	} {
		t.Run(name, func(t *testing.T) {
			a, b := base(), base()
			// next is as a composer builds it: renderings in generation order.
			slices.SortFunc(b.Renderings, func(x, y v1alpha1.GenerationRendering) int { return x.Generation - y.Generation })
			tc.edit(&a, &b)
			if got := sameStatus(a, b); got != tc.want {
				t.Errorf("sameStatus: got %t, want %t", got, tc.want)
			}
		})
	}
}

// TestInstanceRequirements: an engine reads its instance from the
// ConfigMap the instance publishes, and asks for the claim only while that
// ConfigMap is missing (the claim's status changes at every step of the
// instance; a required object is watched).
func TestInstanceRequirements(t *testing.T) {
	own := Requirement{APIVersion: "compute.firebolt.io/v1alpha1", Kind: "FireboltEngine", Name: "demo", Namespace: "firebolt"}
	state := Requirement{APIVersion: "v1", Kind: "ConfigMap", Name: "inst-engines", Namespace: "firebolt"}
	claim := Requirement{APIVersion: "compute.firebolt.io/v1alpha1", Kind: "FireboltInstance", Name: "inst", Namespace: "firebolt"}
	cases := map[string]struct {
		ref  InstanceRef
		want map[string]Requirement
	}{
		"NotFetchedYet":   {InstanceRef{Name: "inst"}, map[string]Requirement{"claim": own, "instance-state": state}},
		"Published":       {InstanceRef{Name: "inst", StateResolved: true, Published: true, Resolved: true, Found: true}, map[string]Requirement{"claim": own, "instance-state": state}},
		"NotPublished":    {InstanceRef{Name: "inst", StateResolved: true}, map[string]Requirement{"claim": own, "instance-state": state, "instance": claim}},
		"NeitherExists":   {InstanceRef{Name: "inst", StateResolved: true, Resolved: true}, map[string]Requirement{"claim": own, "instance-state": state, "instance": claim}},
		"ClaimWithoutMap": {InstanceRef{Name: "inst", StateResolved: true, Resolved: true, Found: true}, map[string]Requirement{"claim": own, "instance-state": state, "instance": claim}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := stableAt(t, 0, baseSpec())
			in.Instance = tc.ref
			if diff := cmp.Diff(tc.want, Compute(in, Signals{}, testNow).Requirements); diff != "" {
				t.Errorf("requirements: -want, +got:\n%s", diff)
			}
		})
	}
}
