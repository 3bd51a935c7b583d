package instance

import (
	"testing"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

func object(kind string, generation int64, spec, status map[string]any) *composed.Unstructured {
	u := composed.New()
	u.SetUnstructuredContent(map[string]any{
		"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": "x", "generation": float64(generation)},
		"spec":     spec, "status": status,
	})
	return u
}

func TestReadiness(t *testing.T) {
	two := map[string]any{"replicas": float64(2)}
	cases := map[string]struct {
		reason      string
		obj         *composed.Unstructured
		wantReady   bool
		wantServing bool
	}{
		"Absent": {
			reason: "Nothing observed is neither ready nor serving.",
		},
		"ConfigMapExists": {
			reason:    "Objects without a status are ready once they exist.",
			obj:       object("ConfigMap", 0, nil, nil),
			wantReady: true,
		},
		"DeploymentRolledOut": {
			reason:      "Every replica of the observed generation available.",
			obj:         object("Deployment", 2, two, map[string]any{"observedGeneration": float64(2), "updatedReplicas": float64(2), "availableReplicas": float64(2)}),
			wantReady:   true,
			wantServing: true,
		},
		"DeploymentRolling": {
			reason:      "A rollout in progress keeps serving but is not ready.",
			obj:         object("Deployment", 3, two, map[string]any{"observedGeneration": float64(3), "updatedReplicas": float64(1), "availableReplicas": float64(2)}),
			wantServing: true,
		},
		"DeploymentNotObservedYet": {
			reason:      "A spec the controller has not seen yet is not ready, whatever the counts say.",
			obj:         object("Deployment", 4, two, map[string]any{"observedGeneration": float64(3), "updatedReplicas": float64(2), "availableReplicas": float64(2)}),
			wantServing: true,
		},
		"DeploymentDefaultReplicas": {
			reason:      "Unset replicas mean one.",
			obj:         object("Deployment", 1, map[string]any{}, map[string]any{"observedGeneration": float64(1), "updatedReplicas": float64(1), "availableReplicas": float64(1)}),
			wantReady:   true,
			wantServing: true,
		},
		"DeploymentNothingAvailable": {
			reason: "No available pod: nothing to route to.",
			obj:    object("Deployment", 1, two, map[string]any{"observedGeneration": float64(1), "updatedReplicas": float64(2)}),
		},
		"StatefulSetReady": {
			reason:      "The PostgreSQL pod passed its readiness probe.",
			obj:         object("StatefulSet", 1, map[string]any{"replicas": float64(1)}, map[string]any{"observedGeneration": float64(1), "readyReplicas": float64(1)}),
			wantReady:   true,
			wantServing: false,
		},
		"StatefulSetStarting": {
			reason: "The PostgreSQL pod is not ready yet.",
			obj:    object("StatefulSet", 1, map[string]any{"replicas": float64(1)}, map[string]any{"observedGeneration": float64(1), "replicas": float64(1)}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := resourceReady(tc.obj); got != tc.wantReady {
				t.Errorf("%s\nresourceReady() = %v, want %v", tc.reason, got, tc.wantReady)
			}
			if got := serving(tc.obj); got != tc.wantServing {
				t.Errorf("%s\nserving() = %v, want %v", tc.reason, got, tc.wantServing)
			}
		})
	}
}
