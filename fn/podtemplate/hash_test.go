package podtemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHashNilAndEmpty(t *testing.T) {
	// The empty template's canonical JSON, spelled out so a change of encoder
	// (which would roll every engine bound to a class) cannot go unnoticed.
	sum := sha256.Sum256([]byte(`{"metadata":{},"spec":{"containers":null}}`))
	emptyWant := hex.EncodeToString(sum[:])[:16]

	got := map[string]string{
		"nil":   Hash(nil),
		"empty": Hash(&corev1.PodTemplateSpec{}),
	}
	want := map[string]string{
		"nil":   "",
		"empty": emptyWant,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Hash(...): -want, +got:\n%s", diff)
	}
}

func TestHashKnownValue(t *testing.T) {
	tpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"b": "2", "a": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "engine", Image: "img",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": resource.MustParse("1Gi"), "cpu": resource.MustParse("1000m")}},
		}}},
	}
	sum := sha256.Sum256([]byte(`{"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"engine","image":"img","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}`))
	if diff := cmp.Diff(hex.EncodeToString(sum[:])[:16], Hash(tpl)); diff != "" {
		t.Errorf("Hash(...): -want, +got:\n%s", diff)
	}
}

// hashBase builds the same template with its maps filled in the given key
// order.
func hashBase(keys []string) *corev1.PodTemplateSpec {
	labels, annotations, selector := map[string]string{}, map[string]string{}, map[string]string{}
	requests := corev1.ResourceList{}
	for _, k := range keys {
		labels["label-"+k] = k
		annotations["note-"+k] = k
		selector["node-"+k] = k
	}
	for _, k := range []string{"cpu", "memory", "ephemeral-storage"} {
		requests[corev1.ResourceName(k)] = resource.MustParse("1")
	}
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			NodeSelector: selector,
			Tolerations:  []corev1.Toleration{{Key: "a"}},
			Containers: []corev1.Container{{
				Name:      EngineContainer,
				Image:     "img:1",
				Env:       []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}},
				Resources: corev1.ResourceRequirements{Requests: requests},
			}},
		},
	}
}

func TestHashIgnoresMapOrder(t *testing.T) {
	var forward, backward []string
	for i := 0; i < 64; i++ {
		forward = append(forward, fmt.Sprintf("k%02d", i))
	}
	for i := len(forward) - 1; i >= 0; i-- {
		backward = append(backward, forward[i])
	}
	want := Hash(hashBase(forward))
	for i := 0; i < 20; i++ {
		if got := Hash(hashBase(backward)); got != want {
			t.Fatalf("Hash(...) depends on map order: %q != %q", got, want)
		}
	}
}

func TestHashEqualQuantities(t *testing.T) {
	a := hashBase([]string{"x"})
	b := hashBase([]string{"x"})
	b.Spec.Containers[0].Resources.Requests["cpu"] = resource.MustParse("1000m")
	if Hash(a) != Hash(b) {
		t.Errorf("Hash(...) differs for equal quantities 1 and 1000m")
	}
}

func TestHashChangesWithContent(t *testing.T) {
	base := Hash(hashBase([]string{"x", "y"}))
	cases := map[string]func(*corev1.PodTemplateSpec){
		"LabelValue":      func(t *corev1.PodTemplateSpec) { t.Labels["label-x"] = "changed" },
		"AnnotationAdded": func(t *corev1.PodTemplateSpec) { t.Annotations["new"] = "" },
		"Image":           func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "img:2" },
		"EnvOrder": func(t *corev1.PodTemplateSpec) {
			e := t.Spec.Containers[0].Env
			e[0], e[1] = e[1], e[0]
		},
		"TolerationAdded": func(t *corev1.PodTemplateSpec) {
			t.Spec.Tolerations = append(t.Spec.Tolerations, corev1.Toleration{Key: "b"})
		},
		"Quantity": func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Requests["memory"] = resource.MustParse("2")
		},
		"ServiceAccount":      func(t *corev1.PodTemplateSpec) { t.Spec.ServiceAccountName = "sa" },
		"NodeSelectorRemoved": func(t *corev1.PodTemplateSpec) { t.Spec.NodeSelector = nil },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			tpl := hashBase([]string{"x", "y"})
			change(tpl)
			if got := Hash(tpl); got == base {
				t.Errorf("Hash(...) unchanged after %s: %q", name, got)
			}
			if Hash(tpl) == Hash(&corev1.PodTemplateSpec{}) || Hash(tpl) == "" {
				t.Errorf("Hash(...) of a non-empty template equals the empty or nil hash")
			}
		})
	}
}

func TestHashDoesNotModifyInput(t *testing.T) {
	tpl := hashBase([]string{"x"})
	before := tpl.DeepCopy()
	_ = Hash(tpl)
	if diff := cmp.Diff(before, tpl); diff != "" {
		t.Errorf("Hash(...) modified its input: -before, +after:\n%s", diff)
	}
}
