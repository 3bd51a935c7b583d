package instance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

func TestToComposed(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    runtime.Object
		want   map[string]any
	}{
		"DropsNoiseKeepsMeaningfulEmptyObjects": {
			reason: "Status, nulls and empty resources/strategy/metadata objects go; an emptyDir {} and an empty selector stay because they mean something.",
			obj: &appsv1.Deployment{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
				ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "c"}},
						Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					}},
				},
				Status: appsv1.DeploymentStatus{Replicas: 3},
			},
			want: map[string]any{
				"apiVersion": "apps/v1",
				"kind":       "Deployment",
				"metadata":   map[string]any{"name": "d", "namespace": "ns"},
				"spec": map[string]any{
					"selector": map[string]any{},
					"template": map[string]any{"spec": map[string]any{
						"containers": []any{map[string]any{"name": "c"}},
						"volumes":    []any{map[string]any{"name": "v", "emptyDir": map[string]any{}}},
					}},
				},
			},
		},
		"SecretDataIsBase64": {
			reason: "Secret data is written the way the API server stores it.",
			obj: &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: "s"},
				Data:       map[string][]byte{"k": []byte("value")},
			},
			want: map[string]any{
				"apiVersion": "v1",
				"kind":       "Secret",
				"metadata":   map[string]any{"name": "s"},
				"data":       map[string]any{"k": "dmFsdWU="},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := toComposed(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.UnstructuredContent()); diff != "" {
				t.Errorf("%s\ntoComposed(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFrozen(t *testing.T) {
	observed := composed.New()
	observed.SetUnstructuredContent(map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":              "d",
			"namespace":         "ns",
			"uid":               "u",
			"resourceVersion":   "7",
			"generation":        float64(3),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"managedFields":     []any{map[string]any{"manager": "m"}},
			"ownerReferences":   []any{map[string]any{"uid": "x"}},
			"finalizers":        []any{"f"},
			"labels":            map[string]any{"a": "b"},
			"annotations":       map[string]any{"deployment.kubernetes.io/revision": "3"},
		},
		"spec":   map[string]any{"replicas": float64(1)},
		"status": map[string]any{"availableReplicas": float64(1)},
	})
	want := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":        "d",
			"namespace":   "ns",
			"labels":      map[string]any{"a": "b"},
			"annotations": map[string]any{"deployment.kubernetes.io/revision": "3"},
		},
		"spec": map[string]any{"replicas": float64(1)},
	}
	before := observed.DeepCopy()
	got := frozen(observed)
	if diff := cmp.Diff(want, got.UnstructuredContent()); diff != "" {
		t.Errorf("frozen(...): -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(before.UnstructuredContent(), observed.UnstructuredContent()); diff != "" {
		t.Errorf("frozen modified its input: -before, +after:\n%s", diff)
	}
}
