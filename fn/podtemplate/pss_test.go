package podtemplate

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// psa evaluates a pod with Kubernetes' own Pod Security Admission checks.
func psa(t *testing.T, level psaapi.Level, tpl *corev1.PodTemplateSpec) policy.AggregateCheckResult {
	t.Helper()
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return policy.AggregateCheckResults(e.EvaluatePod(psaapi.LevelVersion{Level: level, Version: psaapi.LatestVersion()}, &tpl.ObjectMeta, &tpl.Spec))
}

// TestPolicyCoversBaseline feeds templates that each break one rule of the
// Pod Security Standards to Kubernetes' own checks and to the function's:
// whatever baseline forbids, and what restricted forbids of added
// capabilities and root, the default policy refuses too.
func TestPolicyCoversBaseline(t *testing.T) {
	sidecar := func(sc *corev1.SecurityContext) *corev1.PodTemplateSpec {
		return pod(corev1.PodSpec{Containers: []corev1.Container{{Name: "debug", Image: "busybox", SecurityContext: sc}}})
	}
	cases := map[string]struct {
		level psaapi.Level
		tpl   *corev1.PodTemplateSpec
	}{
		"HostNetwork":      {psaapi.LevelBaseline, pod(corev1.PodSpec{HostNetwork: true})},
		"HostPID":          {psaapi.LevelBaseline, pod(corev1.PodSpec{HostPID: true})},
		"HostIPC":          {psaapi.LevelBaseline, pod(corev1.PodSpec{HostIPC: true})},
		"Privileged":       {psaapi.LevelBaseline, sidecar(&corev1.SecurityContext{Privileged: ptr(true)})},
		"AddedCapability":  {psaapi.LevelBaseline, sidecar(&corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}})},
		"HostPathVolume":   {psaapi.LevelBaseline, pod(corev1.PodSpec{Volumes: []corev1.Volume{hostPath("h", "/etc")}})},
		"HostPort":         {psaapi.LevelBaseline, pod(corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}}}})},
		"SELinuxType":      {psaapi.LevelBaseline, sidecar(&corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}})},
		"SELinuxUser":      {psaapi.LevelBaseline, pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{User: "system_u"}}})},
		"ProcMount":        {psaapi.LevelBaseline, sidecar(&corev1.SecurityContext{ProcMount: ptr(corev1.UnmaskedProcMount)})},
		"SeccompPod":       {psaapi.LevelBaseline, pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}})},
		"SeccompContainer": {psaapi.LevelBaseline, sidecar(&corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}})},
		"AppArmorField":    {psaapi.LevelBaseline, sidecar(&corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}})},
		"AppArmorAnnotation": {psaapi.LevelBaseline, &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1alpha1.AppArmorAnnotationPrefix + "debug": "unconfined"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "debug"}}},
		}},
		"UnsafeSysctl":       {psaapi.LevelBaseline, pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}}}})},
		"WindowsHostProcess": {psaapi.LevelBaseline, pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr(true)}}, HostNetwork: true})},
		"RunAsRoot":          {psaapi.LevelRestricted, sidecar(&corev1.SecurityContext{RunAsUser: ptr(int64(0))})},
		"RunAsNonRootFalse":  {psaapi.LevelRestricted, pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(false)}})},
		"RestrictedCapability": {psaapi.LevelRestricted, sidecar(&corev1.SecurityContext{Capabilities: &corev1.Capabilities{
			Add: []corev1.Capability{"NET_RAW"}, Drop: []corev1.Capability{"ALL"},
		}})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if r := psa(t, tc.level, tc.tpl); r.Allowed {
				t.Fatalf("Pod Security Admission %s allows the template: the case tests nothing", tc.level)
			}
			errs := Validate(tc.tpl, EngineRules, tplPath())
			errs = append(errs, CheckPodSecurity(tc.tpl, v1beta1.PodSecurity{}, tplPath())...)
			if len(errs) == 0 {
				t.Errorf("Pod Security Admission %s forbids the template, the function's policy does not", tc.level)
			}
		})
	}
}

// TestSafeSysctlsAreBaseline checks every sysctl the policy lets through
// against Kubernetes' own baseline check.
func TestSafeSysctlsAreBaseline(t *testing.T) {
	for _, s := range v1alpha1.SafeSysctls {
		tpl := pod(corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: s, Value: "1"}}}})
		if r := psa(t, psaapi.LevelBaseline, tpl); !r.Allowed {
			t.Errorf("sysctl %s: baseline forbids it (%s), the policy allows it", s, strings.Join(r.ForbiddenReasons, ", "))
		}
	}
}
