package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// TestRoutingService: the routing Service is created once the first
// generation's StatefulSet exists, selecting it, and once observed it is returned on every call,
// whatever the phase, gate or status: Crossplane deletes what a function
// leaves out.
func TestRoutingService(t *testing.T) {
	type want struct {
		Present bool
		Route   int
	}
	cases := map[string]struct {
		reason string
		in     func(t *testing.T) Inputs
		want   want
	}{
		"NotCreatedBeforeTheFirstStatefulSetExists": {
			reason: "The original creates the Service after the first generation's StatefulSet: the call that returns the StatefulSet for the first time creates no Service.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withRecording(&in, 0, baseSpec())
				return in
			},
			want: want{Present: false, Route: -1},
		},
		"CreatedOnceTheFirstStatefulSetExists": {
			reason: "Once the first generation's StatefulSet is observed, the Service is created selecting it; its pods are not ready, so it has no endpoint yet.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 0})
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"NotCreatedWhileCreatingIsGated": {
			reason: "The original changes nothing while the instance gate holds: no Service, even though the StatefulSet exists.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 0})
				in.Instance.Status.MetadataReady = false
				return in
			},
			want: want{Present: false, Route: -1},
		},
		"NotCreatedBeforeTheFirstGenerationIsRecorded": {
			reason: "The call that records the first rendering creates nothing.",
			in:     func(t *testing.T) Inputs { return testInputs(t, "creating", 0, -1) },
			want:   want{Present: false, Route: -1},
		},
		"KeptWhileCreatingIsGatedOnTheInstance": {
			reason: "An instance that stops being ready must not delete the Service.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 1})
				withRoute(&in, 0)
				in.Instance.Status.MetadataReady = false
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"KeptWhileCreatingIsGatedOnTheClass": {
			reason: "A class that goes missing must not delete the Service.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 1})
				withRoute(&in, 0)
				in.Spec.EngineClassRef = classRef("gone")
				in.Class = ClassRef{Name: "gone", SpecResolved: true, Resolved: true}
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"KeptAtActiveGenerationMinusOne": {
			reason: "A terminal phase without an active generation creates one; the Service stays.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, v1alpha1.EnginePhaseStable, 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withRoute(&in, 0)
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"KeptAfterALostStatusWrite": {
			reason: "The switch's status write was lost: the status still says switching with no active generation, " +
				"and the Service already selects the new generation; it stays, and the next write records it active.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, v1alpha1.EnginePhaseSwitching, 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withRoute(&in, 0)
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"KeptWhileTheFirstGenerationIsReplaced": {
			reason: "No generation is active, but the Service selects live, ready pods of an abandoned generation: " +
				"they may be serving, so the selector stays while they exist, and only switching moves it to a ready generation.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 1, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withRecording(&in, 1, imageSpec("engine:v2"))
				in.Spec = imageSpec("engine:v2")
				withRoute(&in, 0)
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"KeptWhenSwitchingFindsNothingToSwitchTo": {
			reason: "Switching to a generation that was never created goes back to creating; the Service stays.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, v1alpha1.EnginePhaseSwitching, 1, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withRoute(&in, 0)
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"KeptWhenTheStatusIsLost": {
			reason: "A composite whose status is gone starts over; the Service stays as it is.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "", 0, 0)
				in.Status = v1alpha1.FireboltEngineStatus{}
				withGeneration(&in, 3, baseSpec(), pods{2, 2})
				withRoute(&in, 3)
				return in
			},
			want: want{Present: true, Route: 3},
		},
		"KeptOnAGoneGenerationUntilTheNextStatefulSetExists": {
			reason: "Before the first switch nothing is served: a Service left selecting an abandoned generation " +
				"that no longer exists is left as it is until the generation being created has its StatefulSet.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 1, -1)
				withRecording(&in, 1, baseSpec())
				withRoute(&in, 0)
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"FollowsTheCurrentGenerationOnceItsStatefulSetExists": {
			reason: "A Service selecting a generation that is gone selects the generation being created once its StatefulSet exists.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 1, -1)
				withGeneration(&in, 1, baseSpec(), pods{2, 0})
				withRoute(&in, 0)
				return in
			},
			want: want{Present: true, Route: 1},
		},
		"NotMovedWhileCreatingIsGated": {
			reason: "While the class gate holds, a Service selecting a generation that is gone is left as it is.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 1, -1)
				withGeneration(&in, 1, baseSpec(), pods{2, 0})
				withRoute(&in, 0)
				in.Spec.EngineClassRef = classRef("gone")
				in.Class = ClassRef{Name: "gone", SpecResolved: true, Resolved: true}
				return in
			},
			want: want{Present: true, Route: 0},
		},
		"KeptUnchangedWhenItSelectsNothingOfOurs": {
			reason: "A Service whose selector names no generation (edited out of band) is returned as observed until the current generation's StatefulSet exists.",
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 1, -1)
				withRecording(&in, 1, baseSpec())
				withRoute(&in, 0)
				unstructured.RemoveNestedField(in.Observed[RoutingServiceKey].m, "spec", "selector", LabelGeneration)
				return in
			},
			want: want{Present: true, Route: -1},
		},
		"KeptWhileStableIsGated": {
			reason: "A stable engine whose instance is not ready keeps serving.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 2, baseSpec())
				in.Instance.Status.MetadataReady = false
				return in
			},
			want: want{Present: true, Route: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Compute(tc.in(t), Signals{}, testNow)
			_, present := p.Resources[RoutingServiceKey]
			got := want{Present: present, Route: summarize(p).Route}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nrouting Service: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
