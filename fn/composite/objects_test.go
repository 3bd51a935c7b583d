package composite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

func TestToDesired(t *testing.T) {
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
			got, err := ToDesired(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nToDesired(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestUnchanged(t *testing.T) {
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
	got := Unchanged(observed.UnstructuredContent())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unchanged(...): -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(before.UnstructuredContent(), observed.UnstructuredContent()); diff != "" {
		t.Errorf("Unchanged modified its input: -before, +after:\n%s", diff)
	}
}

func TestUnchangedDropsKubectlLastApplied(t *testing.T) {
	cases := map[string]struct {
		reason      string
		annotations map[string]any
		want        map[string]any
	}{
		"OthersKept": {
			reason:      "kubectl's copy of what it applied is never the function's; other annotations stay.",
			annotations: map[string]any{annotationLastAppliedKubectl: "{}", "crossplane.io/composition-resource-name": "g0-headless"},
			want: map[string]any{"name": "demo-g0-hl", "namespace": "firebolt",
				"annotations": map[string]any{"crossplane.io/composition-resource-name": "g0-headless"}},
		},
		"NoneLeft": {
			reason:      "An annotation map left empty goes.",
			annotations: map[string]any{annotationLastAppliedKubectl: "{}"},
			want:        map[string]any{"name": "demo-g0-hl", "namespace": "firebolt"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := map[string]any{
				"apiVersion": "v1", "kind": "Service",
				"metadata": map[string]any{"name": "demo-g0-hl", "namespace": "firebolt", "uid": "u", "annotations": tc.annotations},
			}
			got := Unchanged(observed)
			if diff := cmp.Diff(tc.want, got["metadata"]); diff != "" {
				t.Errorf("%s\nUnchanged(...) metadata: -want, +got:\n%s", tc.reason, diff)
			}
			if _, ok := tc.annotations[annotationLastAppliedKubectl]; !ok {
				t.Error("Unchanged modified the observed object")
			}
		})
	}
}
