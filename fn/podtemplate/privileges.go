package podtemplate

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// validatePrivileges reports what no function input may allow, the same
// rules the API server applies through v1alpha1.TemplateSite.PrivilegeRules:
// nodeName, unsafe sysctls, SELinux, seccomp and AppArmor overrides,
// Windows host processes, privileged containers, privilege escalation,
// unmasked /proc and hostPorts. The API server refuses these first; this
// keeps a composite that reached the function some other way from
// rendering them.
func validatePrivileges(tpl *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	spec := p.Child("spec")
	if tpl.Spec.NodeName != "" {
		errs = append(errs, field.Forbidden(spec.Child("nodeName"), v1alpha1.DetailNodeName))
	}
	errs = append(errs, appArmorAnnotations(tpl.Annotations, p.Child("metadata", "annotations"))...)
	if sc := tpl.Spec.SecurityContext; sc != nil {
		scp := spec.Child("securityContext")
		for i, s := range sc.Sysctls {
			if !slices.Contains(v1alpha1.SafeSysctls, s.Name) {
				errs = append(errs, field.Forbidden(scp.Child("sysctls").Index(i).Child("name"),
					"sysctl "+s.Name+" is not one of the safe sysctls; "+v1alpha1.DetailPSSBaseline))
			}
		}
		errs = append(errs, sharedSecurityContext(scp, sc.SELinuxOptions, sc.SeccompProfile, sc.AppArmorProfile, sc.WindowsOptions)...)
	}
	for _, l := range []struct {
		name string
		list []corev1.Container
	}{{"containers", tpl.Spec.Containers}, {"initContainers", tpl.Spec.InitContainers}} {
		for i := range l.list {
			errs = append(errs, containerPrivileges(&l.list[i], entry(spec.Child(l.name), l.list[i].Name, i))...)
		}
	}
	return errs
}

func containerPrivileges(c *corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range c.Ports {
		if c.Ports[i].HostPort != 0 {
			errs = append(errs, field.Forbidden(p.Child("ports").Index(i).Child("hostPort"), v1alpha1.DetailPSSBaseline))
		}
	}
	sc := c.SecurityContext
	if sc == nil {
		return errs
	}
	scp := p.Child("securityContext")
	if sc.Privileged != nil && *sc.Privileged {
		errs = append(errs, field.Forbidden(scp.Child("privileged"), v1alpha1.DetailPSSBaseline))
	}
	if sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation {
		errs = append(errs, field.Forbidden(scp.Child("allowPrivilegeEscalation"), v1alpha1.DetailPSSBaseline))
	}
	if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
		errs = append(errs, field.Forbidden(scp.Child("procMount"), "must be Default; "+v1alpha1.DetailPSSBaseline))
	}
	return append(errs, sharedSecurityContext(scp, sc.SELinuxOptions, sc.SeccompProfile, sc.AppArmorProfile, sc.WindowsOptions)...)
}

// sharedSecurityContext checks the fields pod and container
// securityContexts have in common.
func sharedSecurityContext(p *field.Path, se *corev1.SELinuxOptions, seccomp *corev1.SeccompProfile,
	apparmor *corev1.AppArmorProfile, windows *corev1.WindowsSecurityContextOptions) field.ErrorList {
	var errs field.ErrorList
	if se != nil {
		sp := p.Child("seLinuxOptions")
		if !slices.Contains(v1alpha1.AllowedSELinuxTypes, se.Type) {
			errs = append(errs, field.Forbidden(sp.Child("type"),
				"must be one of "+strings.Join(v1alpha1.AllowedSELinuxTypes[1:], ", ")+"; "+v1alpha1.DetailPSSBaseline))
		}
		if se.User != "" {
			errs = append(errs, field.Forbidden(sp.Child("user"), v1alpha1.DetailPSSBaseline))
		}
		if se.Role != "" {
			errs = append(errs, field.Forbidden(sp.Child("role"), v1alpha1.DetailPSSBaseline))
		}
	}
	if seccomp != nil && seccomp.Type == corev1.SeccompProfileTypeUnconfined {
		errs = append(errs, field.Forbidden(p.Child("seccompProfile", "type"), "Unconfined is "+v1alpha1.DetailPSSBaseline))
	}
	if apparmor != nil && apparmor.Type == corev1.AppArmorProfileTypeUnconfined {
		errs = append(errs, field.Forbidden(p.Child("appArmorProfile", "type"), "Unconfined is "+v1alpha1.DetailPSSBaseline))
	}
	if windows != nil && windows.HostProcess != nil && *windows.HostProcess {
		errs = append(errs, field.Forbidden(p.Child("windowsOptions", "hostProcess"), v1alpha1.DetailPSSBaseline))
	}
	return errs
}

// appArmorAnnotations refuses the deprecated AppArmor annotations unless
// they name the runtime's default or a node-local profile.
func appArmorAnnotations(m map[string]string, p *field.Path) field.ErrorList {
	var keys []string
	for k, v := range m {
		if strings.HasPrefix(k, v1alpha1.AppArmorAnnotationPrefix) && v != "runtime/default" && !strings.HasPrefix(v, "localhost/") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	errs := make(field.ErrorList, 0, len(keys))
	for _, k := range keys {
		errs = append(errs, field.Forbidden(p.Key(k), "only runtime/default or localhost/<profile>; "+v1alpha1.DetailPSSBaseline))
	}
	return errs
}
