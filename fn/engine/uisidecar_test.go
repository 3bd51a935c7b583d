package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestUISidecarRejection(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     func(t *testing.T) Inputs
		want   *rejection
	}{
		"NoSidecar": {
			reason: "An engine without the sidecar needs no UI image.",
			in:     func(t *testing.T) Inputs { return testInputs(t, "stable", 0, 0) },
		},
		"EngineAsksWithoutImage": {
			reason: "The sidecar has no default image, so the engine is held and told where the image is set.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "stable", 0, 0)
				in.Spec.UISidecar = ptrTo(true)
				return in
			},
			want: &rejection{Reason: ReasonUISidecarImageNotSet, Message: "spec.uiSidecar asks for the engine web UI sidecar, which has no default image: the platform sets a pinned one in spec.images.engineUI of the function-firebolt input in the Composition; until then set uiSidecar to false"},
		},
		"ClassAsksWithoutImage": {
			reason: "A sidecar inherited from the class names the class.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "stable", 0, 0)
				in.Spec.EngineClassRef = classRef("big")
				in.Class = foundClass("big", corev1.PodTemplateSpec{})
				in.Class.Spec.UISidecar = ptrTo(true)
				return in
			},
			want: &rejection{Reason: ReasonUISidecarImageNotSet, Message: "spec.uiSidecar of FireboltEngineClass big asks for the engine web UI sidecar, which has no default image: the platform sets a pinned one in spec.images.engineUI of the function-firebolt input in the Composition; until then set uiSidecar to false"},
		},
		"EngineTurnsClassSidecarOff": {
			reason: "The engine's false wins over the class's true.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "stable", 0, 0)
				in.Spec.EngineClassRef = classRef("big")
				in.Class = foundClass("big", corev1.PodTemplateSpec{})
				in.Class.Spec.UISidecar = ptrTo(true)
				in.Spec.UISidecar = ptrTo(false)
				return in
			},
		},
		"ImageConfigured": {
			reason: "With an image in the function input the sidecar renders.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "stable", 0, 0)
				in.Spec.UISidecar = ptrTo(true)
				in.Config.Images.EngineUI = "registry.example/firebolt-core-ui:1.2.0"
				return in
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := uiSidecarRejection(tc.in(t))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(rejection{})); diff != "" {
				t.Errorf("%s\nuiSidecarRejection(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
