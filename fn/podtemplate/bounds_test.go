package podtemplate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestResourceBounds(t *testing.T) {
	path := field.NewPath("spec", "template", "spec", "containers").Key(EngineContainer).Child("resources")
	maximum := rl("cpu", "32", "memory", "256Gi", "ephemeral-storage", "10Ti")
	cases := map[string]struct {
		effective corev1.ResourceRequirements
		max       corev1.ResourceList
		want      []string
	}{
		"NoMaximum": {
			effective: corev1.ResourceRequirements{Requests: rl("cpu", "1000")},
		},
		"NoResources": {
			max: maximum,
		},
		"WithinAndAtMaximum": {
			effective: corev1.ResourceRequirements{
				Requests: rl("cpu", "32", "memory", "1Gi"),
				Limits:   rl("cpu", "32000m", "memory", "256Gi", "ephemeral-storage", "10Ti"),
			},
			max: maximum,
		},
		"UnboundedNameAndZeroMaximum": {
			effective: corev1.ResourceRequirements{Requests: rl("nvidia.com/gpu", "8", "cpu", "64")},
			max:       rl("cpu", "0"),
		},
		"RequestsAndLimitsExceed": {
			effective: corev1.ResourceRequirements{
				Requests: rl("memory", "300Gi", "cpu", "32001m", "ephemeral-storage", "1Gi"),
				Limits:   rl("ephemeral-storage", "11Ti", "cpu", "64"),
			},
			max: maximum,
			want: []string{
				`spec.template.spec.containers[engine].resources.requests[cpu]: Invalid value: "32001m": exceeds maximum 32`,
				`spec.template.spec.containers[engine].resources.requests[memory]: Invalid value: "300Gi": exceeds maximum 256Gi`,
				`spec.template.spec.containers[engine].resources.limits[cpu]: Invalid value: "64": exceeds maximum 32`,
				`spec.template.spec.containers[engine].resources.limits[ephemeral-storage]: Invalid value: "11Ti": exceeds maximum 10Ti`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := messages(ResourceBounds(tc.effective, tc.max, path))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ResourceBounds(...): -want, +got:\n%s", diff)
			}
		})
	}
}
