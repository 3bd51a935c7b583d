package v1alpha1

import (
	"fmt"
	"strings"
)

// Privilege rules: what no pod template may ask for, whatever the function
// input says. They follow the Kubernetes Pod Security Standards ("baseline"
// forbids all of them, so "restricted" does too) plus nodeName, which
// bypasses the scheduler. The API server refuses them through the CEL rules
// below; the function checks the same lists (fn/podtemplate) so that a
// composite written around the claim is refused too. Rules a platform may
// relax (hostPath, added capabilities, ServiceAccounts, running as root)
// are the function's alone: admission cannot see the function input.

// SafeSysctls are the sysctls the Pod Security Standards baseline profile
// allows (namespaced, and isolated from the node and other pods).
var SafeSysctls = []string{
	"kernel.shm_rmid_forced",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.tcp_syncookies",
	"net.ipv4.ping_group_range",
	"net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
}

// AllowedSELinuxTypes are the SELinux types baseline lets a pod or container
// choose; user and role may not be set at all.
var AllowedSELinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

// AppArmorAnnotationPrefix starts the deprecated per-container AppArmor
// annotations, which the kubelet still honours.
const AppArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/"

// Detail texts shared by the CEL messages and the function's errors.
const (
	DetailPSSBaseline = "refused on every Composition (Pod Security Standards baseline)"
	DetailNodeName    = "refused on every Composition: it bypasses the scheduler, taints and node restrictions; use nodeSelector or affinity"
)

// securityContextRule is one check on a pod or container securityContext:
// field is the path below securityContext, bad a CEL predicate on the value
// written @, and what the message says of it.
type securityContextRule struct {
	field string
	bad   string
	what  string
}

func celList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = "'" + v + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// sharedSecurityContextRules apply to pod and container securityContexts.
func sharedSecurityContextRules() []securityContextRule {
	return []securityContextRule{
		{"seLinuxOptions.type", "!(@ in " + celList(AllowedSELinuxTypes) + ")", "seLinuxOptions.type must be one of " + strings.Join(AllowedSELinuxTypes[1:], ", ")},
		{"seLinuxOptions.user", "@ != ''", "seLinuxOptions.user must not be set"},
		{"seLinuxOptions.role", "@ != ''", "seLinuxOptions.role must not be set"},
		{"seccompProfile.type", "@ == 'Unconfined'", "seccompProfile.type must not be Unconfined"},
		{"appArmorProfile.type", "@ == 'Unconfined'", "appArmorProfile.type must not be Unconfined"},
		{"windowsOptions.hostProcess", "@", "windowsOptions.hostProcess must not be true"},
	}
}

// containerSecurityContextRules apply to every container and init container.
func containerSecurityContextRules() []securityContextRule {
	return append([]securityContextRule{
		{"privileged", "@", "privileged must not be true"},
		{"allowPrivilegeEscalation", "@", "allowPrivilegeEscalation must not be true"},
		{"procMount", "@ != 'Default'", "procMount must be Default"},
	}, sharedSecurityContextRules()...)
}

// present is the CEL guard that every segment of dotted path p below v is
// set.
func present(v, p string) string {
	segs := strings.Split(p, ".")
	guards := make([]string, 0, len(segs))
	cur := v
	for _, seg := range segs {
		cur += "." + seg
		guards = append(guards, "has("+cur+")")
	}
	return strings.Join(guards, " && ")
}

// violates is the CEL expression that is true when v.securityContext.<field>
// is set to a value r refuses.
func (r securityContextRule) violates(v string) string {
	x := v + ".securityContext." + r.field
	return "(" + present(v, "securityContext."+r.field) + " && " + strings.ReplaceAll(r.bad, "@", x) + ")"
}

// PrivilegeRules returns the CEL rules that refuse, at the template at s,
// everything no function input may allow, except the deprecated AppArmor
// annotations: walking a template's annotations costs more than the API
// server's CEL budget allows, so the function alone refuses those.
func (s TemplateSite) PrivilegeRules() []TemplateRule {
	shared, perContainer := sharedSecurityContextRules(), containerSecurityContextRules()
	rs := make([]TemplateRule, 0, 2+len(shared)+2*(len(perContainer)+1))
	rs = append(rs,
		TemplateRule{
			At:      "spec",
			Rule:    "!(has(self.nodeName) && self.nodeName != '')",
			Message: fmt.Sprintf("%s.spec.nodeName: %s", s.Path, DetailNodeName),
		},
		TemplateRule{
			At:      "spec",
			Rule:    "!(" + present("self", "securityContext.sysctls") + ") || self.securityContext.sysctls.all(x, x.name in " + celList(SafeSysctls) + ")",
			Message: fmt.Sprintf("%s.spec.securityContext.sysctls: only the safe sysctls (%s) may be set; %s", s.Path, strings.Join(SafeSysctls, ", "), DetailPSSBaseline),
		},
	)
	for _, r := range shared {
		rs = append(rs, TemplateRule{
			At:      "spec",
			Rule:    "!" + r.violates("self"),
			Message: fmt.Sprintf("%s.spec.securityContext.%s; %s", s.Path, r.what, DetailPSSBaseline),
		})
	}
	for _, list := range []string{"containers", "initContainers"} {
		for _, r := range perContainer {
			rs = append(rs, TemplateRule{
				At:      "spec." + list,
				Rule:    "self.all(c, !" + r.violates("c") + ")",
				Message: fmt.Sprintf("%s.spec.%s[*].securityContext.%s; %s", s.Path, list, r.what, DetailPSSBaseline),
			})
		}
		rs = append(rs, TemplateRule{
			At:      "spec." + list,
			Rule:    "self.all(c, !has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0))",
			Message: fmt.Sprintf("%s.spec.%s[*].ports[*].hostPort must not be set; %s", s.Path, list, DetailPSSBaseline),
		})
	}
	return rs
}
