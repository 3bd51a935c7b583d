package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func sts(generation, observed, replicas, ready any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"generation": generation}, "status": map[string]any{}}}
	st := u.Object["status"].(map[string]any)
	for k, v := range map[string]any{"observedGeneration": observed, "replicas": replicas, "readyReplicas": ready} {
		if v != nil {
			st[k] = v
		}
	}
	return u
}

func TestStatefulSetPods(t *testing.T) {
	cases := map[string]struct {
		obs     *unstructured.Unstructured
		desired int64
		want    podsState
	}{
		"Missing": {
			obs: nil, desired: 2,
			want: podsState{Desired: 2},
		},
		"AllReadyFloatNumbers": {
			obs: sts(float64(2), float64(2), float64(3), float64(3)), desired: 3,
			want: podsState{Exists: true, Ready: true, ReadyReplicas: 3, Replicas: 3, Desired: 3},
		},
		"AllReadyIntNumbers": {
			obs: sts(int64(1), int64(1), int64(2), int64(2)), desired: 2,
			want: podsState{Exists: true, Ready: true, ReadyReplicas: 2, Replicas: 2, Desired: 2},
		},
		"ControllerHasNotSeenTheSpec": {
			obs: sts(int64(2), int64(1), int64(2), int64(2)), desired: 2,
			want: podsState{Exists: true, ReadyReplicas: 2, Replicas: 2, Desired: 2},
		},
		"SomeNotReady": {
			obs: sts(int64(1), int64(1), int64(3), int64(2)), desired: 3,
			want: podsState{Exists: true, ReadyReplicas: 2, Replicas: 3, Desired: 3},
		},
		"ExtraPodsStillTerminating": {
			obs: sts(int64(1), int64(1), int64(3), int64(2)), desired: 2,
			want: podsState{Exists: true, ReadyReplicas: 2, Replicas: 3, Desired: 2},
		},
		"ZeroReplicasReadyOnceItExists": {
			obs: sts(int64(1), nil, nil, nil), desired: 0,
			want: podsState{Exists: true, Ready: true, Desired: 0},
		},
		"NoStatusYet": {
			obs: sts(int64(1), nil, nil, nil), desired: 1,
			want: podsState{Exists: true, Desired: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for form, obs := range observedForms(t, tc.obs) {
				if diff := cmp.Diff(tc.want, statefulSetPods(obs, tc.desired)); diff != "" {
					t.Errorf("statefulSetPods of %s: -want, +got:\n%s", form, diff)
				}
			}
		})
	}
}

func TestRoutedGeneration(t *testing.T) {
	svc := func(sel any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"selector": sel}}}
	}
	cases := map[string]struct {
		obs  *unstructured.Unstructured
		want int
	}{
		"Missing":     {nil, -1},
		"Selects3":    {svc(map[string]any{LabelGeneration: "3"}), 3},
		"NotANumber":  {svc(map[string]any{LabelGeneration: "x"}), -1},
		"Negative":    {svc(map[string]any{LabelGeneration: "-1"}), -1},
		"NoSelector":  {svc(nil), -1},
		"NoGenLabel":  {svc(map[string]any{LabelEngine: "demo"}), -1},
		"WrongTyping": {svc(map[string]any{LabelGeneration: int64(3)}), -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for form, obs := range observedForms(t, tc.obs) {
				if got := routedGeneration(obs); got != tc.want {
					t.Errorf("routedGeneration of %s: want %d, got %d", form, tc.want, got)
				}
			}
		})
	}
}
