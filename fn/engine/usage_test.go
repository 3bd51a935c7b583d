package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// TestClassUsage: an engine that names a class composes the Usage that
// stops the class from being deleted under it, and only such an engine.
func TestClassUsage(t *testing.T) {
	withClass := func(t *testing.T, phase v1alpha1.EnginePhase, ref ClassRef) Inputs {
		in := stableAt(t, 0, baseSpec())
		in.Status.Phase = phase
		in.Spec.EngineClassRef = classRef(ref.Name)
		in.Class = ref
		return in
	}
	observedUsage := func(in Inputs) Inputs {
		in.Observed[UsageResourceName("big")] = &ObservedObject{m: Usage("firebolt", "demo", "big").Object}
		return in
	}
	cases := map[string]struct {
		reason string
		in     func(t *testing.T) Inputs
		want   *DesiredObject
	}{
		"NoClass": {
			reason: "An engine without a class uses none.",
			in:     func(t *testing.T) Inputs { return stableAt(t, 0, baseSpec()) },
		},
		"ClassFound": {
			reason: "A found class is protected; the Usage is not ready until Crossplane observes it.",
			in: func(t *testing.T) Inputs {
				return withClass(t, v1alpha1.EnginePhaseStable, foundClass("big", corev1.PodTemplateSpec{}))
			},
			want: &DesiredObject{Object: Usage("firebolt", "demo", "big").Object},
		},
		"ClassFoundAndObserved": {
			reason: "An observed Usage is ready.",
			in: func(t *testing.T) Inputs {
				return observedUsage(withClass(t, v1alpha1.EnginePhaseStable, foundClass("big", corev1.PodTemplateSpec{})))
			},
			want: &DesiredObject{Object: Usage("firebolt", "demo", "big").Object, Ready: true},
		},
		"FirstCall": {
			reason: "The first call writes only the status intent.",
			in: func(t *testing.T) Inputs {
				return withClass(t, "", foundClass("big", corev1.PodTemplateSpec{}))
			},
		},
		"ClassMissing": {
			reason: "A Usage of a missing class could never become ready; the class condition explains instead.",
			in: func(t *testing.T) Inputs {
				return withClass(t, v1alpha1.EnginePhaseStable, ClassRef{Name: "big", SpecResolved: true, Resolved: true})
			},
		},
		"ClassNotResolvedYet": {
			reason: "A call before Crossplane has fetched the class keeps the Usage it already has.",
			in: func(t *testing.T) Inputs {
				return observedUsage(withClass(t, v1alpha1.EnginePhaseStable, ClassRef{Name: "big"}))
			},
			want: &DesiredObject{Object: Usage("firebolt", "demo", "big").Object, Ready: true},
		},
		"SwitchedClass": {
			reason: "After a switch to another class only the new class's Usage is desired; the old one is deleted.",
			in: func(t *testing.T) Inputs {
				in := withClass(t, v1alpha1.EnginePhaseStable, foundClass("big", corev1.PodTemplateSpec{}))
				in.Observed[UsageResourceName("small")] = &ObservedObject{m: Usage("firebolt", "demo", "small").Object}
				return in
			},
			want: &DesiredObject{Object: Usage("firebolt", "demo", "big").Object},
		},
		"ReferenceDropped": {
			reason: "An engine that no longer names a class drops the Usage it had.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Observed[UsageResourceName("big")] = &ObservedObject{m: Usage("firebolt", "demo", "big").Object}
				return in
			},
		},
		"ClassNotPublishedYet": {
			reason: "A class whose claim exists but whose ConfigMap is not composed yet is protected already: the Usage is of the claim.",
			in: func(t *testing.T) Inputs {
				return withClass(t, v1alpha1.EnginePhaseStable, ClassRef{Name: "big", SpecResolved: true, Resolved: true, Found: true})
			},
			want: &DesiredObject{Object: Usage("firebolt", "demo", "big").Object},
		},
		"ClassSpecUndecodable": {
			reason: "A class whose published spec cannot be decoded exists, and stays protected.",
			in: func(t *testing.T) Inputs {
				c := foundClass("big", corev1.PodTemplateSpec{})
				c.Err = "cannot decode its spec: x"
				return observedUsage(withClass(t, v1alpha1.EnginePhaseStable, c))
			},
			want: &DesiredObject{Object: Usage("firebolt", "demo", "big").Object, Ready: true},
		},
		"Draining": {
			reason: "The Usage stays through a rollout.",
			in: func(t *testing.T) Inputs {
				return observedUsage(withClass(t, v1alpha1.EnginePhaseDraining, foundClass("big", corev1.PodTemplateSpec{})))
			},
			want: &DesiredObject{Object: Usage("firebolt", "demo", "big").Object, Ready: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Compute(tc.in(t), Signals{}, testNow)
			var gotp *DesiredObject
			for name, got := range p.Resources {
				if !IsUsageResourceName(name) {
					continue
				}
				if gotp != nil || name != UsageResourceName("big") {
					t.Fatalf("%s\nunexpected Usage resource %q", tc.reason, name)
				}
				gotp = &got
			}
			if diff := cmp.Diff(tc.want, gotp); diff != "" {
				t.Errorf("%s\nUsage: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
