package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// TestEnginePodSecurityLevel evaluates the rendered engine pod with
// Kubernetes' own Pod Security Admission checks, which is what docs/security.md
// tells platforms about engine namespaces: the default pod is baseline and
// misses restricted only by its (deliberately) unset seccomp profile; with
// a Localhost profile from the template it is restricted.
func TestEnginePodSecurityLevel(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		template   *corev1.PodTemplateSpec
		uiSidecar  bool
		restricted []string // what restricted forbids; nil: allowed
	}{
		"Default": {
			restricted: []string{"seccompProfile"},
		},
		"DefaultWithUISidecar": {
			uiSidecar:  true,
			restricted: []string{"seccompProfile"},
		},
		"LocalhostProfile": {
			template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptrTo("profiles/firebolt-engine.json")},
			}}},
			uiSidecar: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, "creating", 1, 0)
			in.Spec.Template = tc.template
			in.Spec.UISidecar = ptrTo(tc.uiSidecar)
			sts := &appsv1.StatefulSet{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(renderFor(in, 1, in.Spec).Objects.StatefulSet, sts); err != nil {
				t.Fatal(err)
			}
			tpl := sts.Spec.Template
			for _, l := range []struct {
				level psaapi.Level
				want  []string
			}{{psaapi.LevelBaseline, nil}, {psaapi.LevelRestricted, tc.restricted}} {
				r := policy.AggregateCheckResults(eval.EvaluatePod(psaapi.LevelVersion{Level: l.level, Version: psaapi.LatestVersion()}, &tpl.ObjectMeta, &tpl.Spec))
				if diff := cmp.Diff(l.want, r.ForbiddenReasons); diff != "" {
					t.Errorf("Pod Security %s forbids: -want, +got:\n%s", l.level, diff)
				}
			}
		})
	}
}
