package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// TestClassBinding: an engine that names a class composes its binding to
// it, which the class counts, and only such an engine.
func TestClassBinding(t *testing.T) {
	withClass := func(t *testing.T, phase v1alpha1.EnginePhase, ref ClassRef) Inputs {
		in := stableAt(t, 0, baseSpec())
		in.Status.Phase = phase
		in.Spec.EngineClassRef = classRef(ref.Name)
		in.Class = ref
		return in
	}
	binding := &DesiredObject{Object: Binding("firebolt", "demo", "big").Object, Ready: true}
	cases := map[string]struct {
		reason string
		in     func(t *testing.T) Inputs
		want   *DesiredObject
	}{
		"NoClass": {
			reason: "An engine without a class binds to none.",
			in:     func(t *testing.T) Inputs { return stableAt(t, 0, baseSpec()) },
		},
		"ClassFound": {
			reason: "An engine naming a class binds to it; a ConfigMap is ready once applied, so Crossplane records no 'not yet ready' event.",
			in: func(t *testing.T) Inputs {
				return withClass(t, v1alpha1.EnginePhaseStable, foundClass("big", corev1.PodTemplateSpec{}))
			},
			want: binding,
		},
		"FirstCall": {
			reason: "The first call writes only the status intent.",
			in: func(t *testing.T) Inputs {
				return withClass(t, "", foundClass("big", corev1.PodTemplateSpec{}))
			},
		},
		"ClassMissing": {
			reason: "An engine naming a class that does not exist yet is bound to it already, as the original counts every engine naming a class; the class counts it once it exists.",
			in: func(t *testing.T) Inputs {
				return withClass(t, v1alpha1.EnginePhaseStable, ClassRef{Name: "big", SpecResolved: true, Resolved: true})
			},
			want: binding,
		},
		"ClassNotResolvedYet": {
			reason: "A call before Crossplane has fetched the class keeps the binding.",
			in: func(t *testing.T) Inputs {
				return withClass(t, v1alpha1.EnginePhaseStable, ClassRef{Name: "big"})
			},
			want: binding,
		},
		"SwitchedClass": {
			reason: "After a switch to another class only the new class's binding is desired; the old one is deleted.",
			in: func(t *testing.T) Inputs {
				in := withClass(t, v1alpha1.EnginePhaseStable, foundClass("big", corev1.PodTemplateSpec{}))
				in.Observed[BindingResourceName("small")] = &ObservedObject{m: Binding("firebolt", "demo", "small").Object}
				return in
			},
			want: binding,
		},
		"ReferenceDropped": {
			reason: "An engine that no longer names a class drops the binding it had.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Observed[BindingResourceName("big")] = &ObservedObject{m: Binding("firebolt", "demo", "big").Object}
				return in
			},
		},
		"ClassSpecUndecodable": {
			reason: "A class whose published spec cannot be decoded exists, and its engines stay bound.",
			in: func(t *testing.T) Inputs {
				c := foundClass("big", corev1.PodTemplateSpec{})
				c.Err = "cannot decode its spec: x"
				return withClass(t, v1alpha1.EnginePhaseStable, c)
			},
			want: binding,
		},
		"Draining": {
			reason: "The binding stays through a rollout.",
			in: func(t *testing.T) Inputs {
				return withClass(t, v1alpha1.EnginePhaseDraining, foundClass("big", corev1.PodTemplateSpec{}))
			},
			want: binding,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Compute(tc.in(t), Signals{}, testNow)
			var gotp *DesiredObject
			for name, got := range p.Resources {
				if !IsBindingResourceName(name) {
					continue
				}
				if gotp != nil || name != BindingResourceName("big") {
					t.Fatalf("%s\nunexpected binding resource %q", tc.reason, name)
				}
				gotp = &got
			}
			if diff := cmp.Diff(tc.want, gotp); diff != "" {
				t.Errorf("%s\nbinding: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
