package podtemplate

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func ptr[T any](v T) *T { return &v }

func tplPath() *field.Path { return field.NewPath("spec", "template") }

// messages flattens an ErrorList into the strings users see, so tests diff
// exact wording and paths.
func messages(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func pod(spec corev1.PodSpec) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: spec}
}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func mount(name, path string) corev1.VolumeMount {
	return corev1.VolumeMount{Name: name, MountPath: path}
}
