package podtemplate

import (
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
)

// CapabilityNetBindService is the one capability the Pod Security Standards
// "restricted" profile lets a container add.
const CapabilityNetBindService = "NET_BIND_SERVICE"

// Where each relaxable rule's allow-list lives, for the messages: a
// refusal says what would permit it and who owns that.
const (
	allowListHostPaths       = "the function input's spec.podSecurity.allowedHostPaths"
	allowListCapabilities    = "the function input's spec.podSecurity.allowedCapabilities"
	allowListServiceAccounts = "the function input's spec.podSecurity.allowedServiceAccountNames"
	allowListRunAsRoot       = "the function input's spec.podSecurity.allowRunAsRoot"
)

// CheckPodSecurity reports what tpl asks for beyond the pod-security
// allow-list ps: hostPath volumes outside allowedHostPaths, added
// capabilities other than NET_BIND_SERVICE and allowedCapabilities,
// ServiceAccounts outside allowedServiceAccountNames (when it is not
// empty), and running as root without allowRunAsRoot. The API server cannot
// check these because they depend on the Composition's input; each error
// names the field and the allow-list that would permit it. A nil template
// passes.
func CheckPodSecurity(tpl *corev1.PodTemplateSpec, ps v1beta1.PodSecurity, p *field.Path) field.ErrorList {
	if tpl == nil {
		return nil
	}
	spec := p.Child("spec")
	var errs field.ErrorList
	for i := range tpl.Spec.Volumes {
		v := &tpl.Spec.Volumes[i]
		if v.HostPath != nil {
			if err := CheckHostPath(v.HostPath.Path, ps, entry(spec.Child("volumes"), v.Name, i).Child("hostPath", "path")); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if n := tpl.Spec.ServiceAccountName; n != "" {
		errs = append(errs, CheckServiceAccount(n, ps, spec.Child("serviceAccountName"))...)
	}
	if n := tpl.Spec.DeprecatedServiceAccount; n != "" {
		errs = append(errs, CheckServiceAccount(n, ps, spec.Child("serviceAccount"))...)
	}
	if sc := tpl.Spec.SecurityContext; sc != nil {
		errs = append(errs, runAsRoot(sc.RunAsUser, sc.RunAsNonRoot, ps, spec.Child("securityContext"))...)
	}
	for _, l := range []struct {
		name string
		list []corev1.Container
	}{{"containers", tpl.Spec.Containers}, {"initContainers", tpl.Spec.InitContainers}} {
		for i := range l.list {
			c := &l.list[i]
			if c.SecurityContext == nil {
				continue
			}
			scp := entry(spec.Child(l.name), c.Name, i).Child("securityContext")
			errs = append(errs, runAsRoot(c.SecurityContext.RunAsUser, c.SecurityContext.RunAsNonRoot, ps, scp)...)
			if caps := c.SecurityContext.Capabilities; caps != nil {
				for j, capability := range caps.Add {
					if !capabilityAllowed(capability, ps) {
						errs = append(errs, field.Forbidden(scp.Child("capabilities", "add").Index(j),
							fmt.Sprintf("capability %s may be added only when listed in %s (%s; %s needs no listing)",
								capability, allowListCapabilities, listed(ps.AllowedCapabilities), CapabilityNetBindService)))
					}
				}
			}
		}
	}
	return errs
}

// CheckHostPath reports a host path outside every allowedHostPaths prefix.
// A path is compared segment by segment after cleaning, and one that climbs
// with ".." is never allowed, whatever it would clean to.
func CheckHostPath(hostPath string, ps v1beta1.PodSecurity, p *field.Path) *field.Error {
	if HostPathAllowed(hostPath, ps) {
		return nil
	}
	return field.Forbidden(p, fmt.Sprintf("host path %q is not below any of %s (%s)", hostPath, allowListHostPaths, listed(ps.AllowedHostPaths)))
}

// HostPathAllowed reports whether ps allows a hostPath volume of hostPath.
func HostPathAllowed(hostPath string, ps v1beta1.PodSecurity) bool {
	if !strings.HasPrefix(hostPath, "/") || slices.Contains(strings.Split(hostPath, "/"), "..") {
		return false
	}
	clean := path.Clean(hostPath)
	for _, prefix := range ps.AllowedHostPaths {
		if prefix == "/" || clean == prefix || strings.HasPrefix(clean, prefix+"/") {
			return true
		}
	}
	return false
}

// CheckServiceAccount reports a ServiceAccount name the allow-list does not
// hold; an empty allow-list allows every name.
func CheckServiceAccount(name string, ps v1beta1.PodSecurity, p *field.Path) field.ErrorList {
	if len(ps.AllowedServiceAccountNames) == 0 || slices.Contains(ps.AllowedServiceAccountNames, name) {
		return nil
	}
	return field.ErrorList{field.Forbidden(p, fmt.Sprintf("ServiceAccount %q is not in %s (%s)", name, allowListServiceAccounts, listed(ps.AllowedServiceAccountNames)))}
}

// capabilityAllowed compares as the container runtimes do: case-blind, with
// or without the kernel's CAP_ prefix.
func capabilityAllowed(c corev1.Capability, ps v1beta1.PodSecurity) bool {
	name := strings.TrimPrefix(strings.ToUpper(string(c)), "CAP_")
	if name == CapabilityNetBindService {
		return true
	}
	for _, a := range ps.AllowedCapabilities {
		if a == v1beta1.CapabilityAll || a == name {
			return true
		}
	}
	return false
}

func runAsRoot(user *int64, nonRoot *bool, ps v1beta1.PodSecurity, p *field.Path) field.ErrorList {
	if ps.AllowRunAsRoot {
		return nil
	}
	var errs field.ErrorList
	if user != nil && *user == 0 {
		errs = append(errs, field.Forbidden(p.Child("runAsUser"), "running as root (UID 0) needs "+allowListRunAsRoot+": true"))
	}
	if nonRoot != nil && !*nonRoot {
		errs = append(errs, field.Forbidden(p.Child("runAsNonRoot"), "false needs "+allowListRunAsRoot+": true"))
	}
	return errs
}

// listed renders an allow-list for a message.
func listed(vs []string) string {
	if len(vs) == 0 {
		return "none listed"
	}
	return "listed: " + strings.Join(vs, ", ")
}
