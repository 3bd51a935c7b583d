package apis_test

import "testing"

const pss = "; refused on every Composition (Pod Security Standards baseline)"

// TestTemplatePrivileges admits claims whose templates ask for privileges.
// What no function input may allow is refused with the field it concerns;
// what the platform operator may allow in the function input (hostPath,
// added capabilities, ServiceAccounts, root) passes admission and is left
// to the function, which can see the input.
func TestTemplatePrivileges(t *testing.T) {
	const engine = "FireboltEngine"
	e := func(muts ...func(map[string]any) map[string]any) func(t *testing.T) map[string]any {
		return ex("engine.yaml", muts...)
	}
	sidecar := func(sc map[string]any) func(map[string]any) map[string]any {
		return setf("spec.template.spec.containers[1]", map[string]any{"name": "debug", "image": "busybox", "securityContext": sc})
	}
	runClaims(t, map[string]claimCase{
		"Privileged": {
			reason: "A privileged container is root on the node.",
			kind:   engine, obj: e(sidecar(map[string]any{"privileged": true})),
			errors: []string{`spec.template.spec.containers: Invalid value: spec.template.spec.containers[*].securityContext.privileged must not be true` + pss},
		},
		"PrivilegedFalse": {
			reason: "privileged: false is fine.",
			kind:   engine, obj: e(sidecar(map[string]any{"privileged": false, "allowPrivilegeEscalation": false, "procMount": "Default"})),
		},
		"PrivilegeEscalationOnPrimary": {
			reason: "The engine container's own securityContext follows the same rules.",
			kind:   engine, obj: e(setf("spec.template.spec.containers[0].securityContext", map[string]any{"allowPrivilegeEscalation": true})),
			errors: []string{`spec.template.spec.containers: Invalid value: spec.template.spec.containers[*].securityContext.allowPrivilegeEscalation must not be true` + pss},
		},
		"InitContainerProcMount": {
			reason: "An unmasked /proc exposes the node's.",
			kind:   engine, obj: e(setf("spec.template.spec.initContainers[0]", map[string]any{"name": "init", "image": "busybox", "securityContext": map[string]any{"procMount": "Unmasked"}})),
			errors: []string{`spec.template.spec.initContainers: Invalid value: spec.template.spec.initContainers[*].securityContext.procMount must be Default` + pss},
		},
		"HostPID": {
			reason: "Host namespaces are refused.",
			kind:   engine, obj: e(setf("spec.template.spec.hostPID", true), setf("spec.template.spec.hostIPC", true)),
			errors: []string{
				`spec.template.spec: Invalid value: spec.template.spec.hostIPC is operator-owned and must not be set`,
				`spec.template.spec: Invalid value: spec.template.spec.hostPID is operator-owned and must not be set`,
			},
		},
		"HostPort": {
			reason: "A hostPort binds the node's network.",
			kind:   engine, obj: e(setf("spec.template.spec.containers[1]", map[string]any{"name": "web", "image": "nginx", "ports": []any{
				map[string]any{"containerPort": int64(80)}, map[string]any{"containerPort": int64(81), "hostPort": int64(8081)},
			}})),
			errors: []string{`spec.template.spec.containers: Invalid value: spec.template.spec.containers[*].ports[*].hostPort must not be set` + pss},
		},
		"NodeName": {
			reason: "nodeName bypasses the scheduler.",
			kind:   engine, obj: e(setf("spec.template.spec.nodeName", "node-1")),
			errors: []string{`spec.template.spec: Invalid value: spec.template.spec.nodeName: refused on every Composition: it bypasses the scheduler, taints and node restrictions; use nodeSelector or affinity`},
		},
		"UnsafeSysctl": {
			reason: "Only the safe sysctls may be set.",
			kind:   engine, obj: e(setf("spec.template.spec.securityContext.sysctls", []any{
				map[string]any{"name": "net.ipv4.tcp_syncookies", "value": "1"}, map[string]any{"name": "kernel.msgmax", "value": "1"},
			})),
			errors: []string{`spec.template.spec: Invalid value: spec.template.spec.securityContext.sysctls: only the safe sysctls (kernel.shm_rmid_forced, net.ipv4.ip_local_port_range, net.ipv4.ip_unprivileged_port_start, net.ipv4.tcp_syncookies, net.ipv4.ping_group_range, net.ipv4.ip_local_reserved_ports, net.ipv4.tcp_keepalive_time, net.ipv4.tcp_fin_timeout, net.ipv4.tcp_keepalive_intvl, net.ipv4.tcp_keepalive_probes, net.ipv4.tcp_rmem, net.ipv4.tcp_wmem) may be set` + pss},
		},
		"SafeSysctl": {
			reason: "A safe sysctl is fine.",
			kind:   engine, obj: e(setf("spec.template.spec.securityContext.sysctls", []any{map[string]any{"name": "net.ipv4.tcp_keepalive_time", "value": "60"}})),
		},
		"SELinux": {
			reason: "Only the container SELinux types; no user or role.",
			kind:   engine, obj: e(
				setf("spec.template.spec.securityContext.seLinuxOptions", map[string]any{"type": "spc_t"}),
				sidecar(map[string]any{"seLinuxOptions": map[string]any{"type": "container_t", "user": "system_u"}}),
			),
			errors: []string{
				`spec.template.spec.containers: Invalid value: spec.template.spec.containers[*].securityContext.seLinuxOptions.user must not be set` + pss,
				`spec.template.spec: Invalid value: spec.template.spec.securityContext.seLinuxOptions.type must be one of container_t, container_init_t, container_kvm_t, container_engine_t` + pss,
			},
		},
		"SeccompUnconfined": {
			reason: "An explicit Unconfined profile is refused; unset (the engine's default) and Localhost are not.",
			kind:   engine, obj: e(
				setf("spec.template.spec.securityContext.seccompProfile", map[string]any{"type": "Unconfined"}),
				sidecar(map[string]any{"seccompProfile": map[string]any{"type": "Unconfined"}}),
			),
			errors: []string{
				`spec.template.spec.containers: Invalid value: spec.template.spec.containers[*].securityContext.seccompProfile.type must not be Unconfined` + pss,
				`spec.template.spec: Invalid value: spec.template.spec.securityContext.seccompProfile.type must not be Unconfined` + pss,
			},
		},
		"SeccompLocalhost": {
			reason: "A node-local profile, e.g. one that allows io_uring, is the platform's way to confine engines.",
			kind:   engine, obj: e(setf("spec.template.spec.securityContext.seccompProfile", map[string]any{"type": "Localhost", "localhostProfile": "profiles/firebolt-engine.json"})),
		},
		"AppArmorUnconfined": {
			reason: "AppArmor may not be switched off.",
			kind:   engine, obj: e(sidecar(map[string]any{"appArmorProfile": map[string]any{"type": "Unconfined"}})),
			errors: []string{`spec.template.spec.containers: Invalid value: spec.template.spec.containers[*].securityContext.appArmorProfile.type must not be Unconfined` + pss},
		},
		"WindowsHostProcess": {
			reason: "A Windows host process is the node.",
			kind:   engine, obj: e(setf("spec.template.spec.securityContext.windowsOptions", map[string]any{"hostProcess": true})),
			errors: []string{`spec.template.spec: Invalid value: spec.template.spec.securityContext.windowsOptions.hostProcess must not be true` + pss},
		},
		"RelaxableRulesPassAdmission": {
			reason: "hostPath, added capabilities, any ServiceAccount, root and storage.hostPath depend on the function input: admission cannot see it, so it lets them through.",
			kind:   engine, obj: e(
				setf("spec.template.spec.serviceAccountName", "engines"),
				setf("spec.template.spec.automountServiceAccountToken", true),
				setf("spec.template.spec.securityContext.runAsUser", int64(0)),
				setf("spec.template.spec.volumes", []any{map[string]any{"name": "logs", "hostPath": map[string]any{"path": "/var/log"}}}),
				sidecar(map[string]any{"capabilities": map[string]any{"add": []any{"SYS_ADMIN"}}, "runAsNonRoot": false}),
				setf("spec.storage", map[string]any{"hostPath": map[string]any{"path": "/mnt/firebolt"}}),
			),
		},
		"ClassPrivileged": {
			reason: "Class templates follow the same rules.",
			kind:   "FireboltEngineClass", obj: ex("engineclass.yaml", setf("spec.template.spec.initContainers[0]", map[string]any{"name": "init", "image": "busybox", "securityContext": map[string]any{"privileged": true}})),
			errors: []string{`spec.template.spec.initContainers: Invalid value: spec.template.spec.initContainers[*].securityContext.privileged must not be true` + pss},
		},
		"MetadataSidecarPrivileged": {
			reason: "Instance templates too: a metadata sidecar may not be privileged.",
			kind:   "FireboltInstance", obj: ex("instance.yaml", setf("spec.metadata.template.spec.containers[0]", map[string]any{"name": "proxy", "image": "busybox", "securityContext": map[string]any{"privileged": true}})),
			errors: []string{`spec.metadata.template.spec.containers: Invalid value: spec.metadata.template.spec.containers[*].securityContext.privileged must not be true` + pss},
		},
		"GatewayNodeName": {
			reason: "Instance templates too: the gateway may not pin a node.",
			kind:   "FireboltInstance", obj: ex("instance.yaml", setf("spec.gateway.template.spec.nodeName", "node-1")),
			errors: []string{`spec.gateway.template.spec: Invalid value: spec.gateway.template.spec.nodeName: refused on every Composition: it bypasses the scheduler, taints and node restrictions; use nodeSelector or affinity`},
		},
	})
}
