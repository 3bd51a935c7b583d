package podtemplate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
)

func hostPath(name, path string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}
}

func withCaps(name string, add ...corev1.Capability) corev1.Container {
	return corev1.Container{Name: name, SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: add, Drop: []corev1.Capability{"ALL"}}}}
}

func TestCheckPodSecurity(t *testing.T) {
	const (
		hostPaths = "the function input's spec.podSecurity.allowedHostPaths"
		caps      = "the function input's spec.podSecurity.allowedCapabilities"
		sas       = "the function input's spec.podSecurity.allowedServiceAccountNames"
	)
	cases := map[string]struct {
		reason string
		tpl    *corev1.PodTemplateSpec
		ps     v1beta1.PodSecurity
		want   []string
	}{
		"Nil": {reason: "A nil template passes."},
		"RestrictedTemplatePasses": {
			reason: "What the restricted profile allows passes the default policy: NET_BIND_SERVICE, non-root, any ServiceAccount.",
			tpl: pod(corev1.PodSpec{
				ServiceAccountName: "engines",
				SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(1000))},
				Containers:         []corev1.Container{withCaps("web", "NET_BIND_SERVICE", "net_bind_service", "CAP_NET_BIND_SERVICE")},
				Volumes:            []corev1.Volume{emptyDir("cache")},
			}),
		},
		"DefaultPolicyRefusesEachRelaxableRule": {
			reason: "Each error names the field and the allow-list that would permit it.",
			tpl: pod(corev1.PodSpec{
				DeprecatedServiceAccount: "old",
				SecurityContext:          &corev1.PodSecurityContext{RunAsUser: ptr(int64(0))},
				Volumes:                  []corev1.Volume{emptyDir("cache"), hostPath("logs", "/var/log")},
				Containers:               []corev1.Container{withCaps("debug", "NET_BIND_SERVICE", "SYS_ADMIN")},
				InitContainers: []corev1.Container{{Name: "chown", SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr(false), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CHOWN"}},
				}}},
			}),
			ps: v1beta1.PodSecurity{AllowedServiceAccountNames: []string{"engines"}},
			want: []string{
				`spec.template.spec.volumes[logs].hostPath.path: Forbidden: host path "/var/log" is not below any of ` + hostPaths + ` (none listed)`,
				`spec.template.spec.serviceAccount: Forbidden: ServiceAccount "old" is not in ` + sas + ` (listed: engines)`,
				`spec.template.spec.securityContext.runAsUser: Forbidden: running as root (UID 0) needs the function input's spec.podSecurity.allowRunAsRoot: true`,
				`spec.template.spec.containers[debug].securityContext.capabilities.add[1]: Forbidden: capability SYS_ADMIN may be added only when listed in ` + caps + ` (none listed; NET_BIND_SERVICE needs no listing)`,
				`spec.template.spec.initContainers[chown].securityContext.runAsNonRoot: Forbidden: false needs the function input's spec.podSecurity.allowRunAsRoot: true`,
				`spec.template.spec.initContainers[chown].securityContext.capabilities.add[0]: Forbidden: capability CHOWN may be added only when listed in ` + caps + ` (none listed; NET_BIND_SERVICE needs no listing)`,
			},
		},
		"AllowListRelaxes": {
			reason: "The same template passes once the input allows each.",
			tpl: pod(corev1.PodSpec{
				ServiceAccountName: "engines",
				SecurityContext:    &corev1.PodSecurityContext{RunAsUser: ptr(int64(0))},
				Volumes:            []corev1.Volume{hostPath("logs", "/var/log/firebolt/"), hostPath("root", "/var/log")},
				Containers:         []corev1.Container{withCaps("debug", "SYS_ADMIN", "cap_sys_ptrace")},
			}),
			ps: v1beta1.PodSecurity{
				AllowedHostPaths:           []string{"/var/log"},
				AllowedCapabilities:        []string{"SYS_ADMIN", "SYS_PTRACE"},
				AllowedServiceAccountNames: []string{"engines"},
				AllowRunAsRoot:             true,
			},
		},
		"AllCapabilities": {
			reason: "ALL in the allow-list allows any capability, ALL included.",
			tpl:    pod(corev1.PodSpec{Containers: []corev1.Container{withCaps("debug", "ALL", "SYS_ADMIN")}}),
			ps:     v1beta1.PodSecurity{AllowedCapabilities: []string{"ALL"}},
		},
		"HostPathPrefixOnSegments": {
			reason: "Prefixes match whole segments; a climbing or relative path never matches.",
			tpl: pod(corev1.PodSpec{Volumes: []corev1.Volume{
				hostPath("a", "/mnt/data"), hostPath("b", "/mnt/data/x"), hostPath("c", "/mnt/database"),
				hostPath("d", "/mnt/data/../etc"), hostPath("e", "mnt/data"),
			}}),
			ps: v1beta1.PodSecurity{AllowedHostPaths: []string{"/mnt/data"}},
			want: []string{
				`spec.template.spec.volumes[c].hostPath.path: Forbidden: host path "/mnt/database" is not below any of ` + hostPaths + ` (listed: /mnt/data)`,
				`spec.template.spec.volumes[d].hostPath.path: Forbidden: host path "/mnt/data/../etc" is not below any of ` + hostPaths + ` (listed: /mnt/data)`,
				`spec.template.spec.volumes[e].hostPath.path: Forbidden: host path "mnt/data" is not below any of ` + hostPaths + ` (listed: /mnt/data)`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := messages(CheckPodSecurity(tc.tpl, tc.ps, tplPath()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCheckPodSecurity(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
