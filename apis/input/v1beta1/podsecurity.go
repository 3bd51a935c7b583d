package v1beta1

import (
	"path"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of the pod-security allow-lists, as the CRD's maxItems say;
// Crossplane never validates the input, so Resolve enforces them.
const (
	MaxAllowedHostPaths           = 64
	MaxAllowedCapabilities        = 64
	MaxAllowedServiceAccountNames = 256
)

// CapabilityAll in AllowedCapabilities allows every capability.
const CapabilityAll = "ALL"

// capabilityName is a capability as Kubernetes writes it: the kernel's name
// without its CAP_ prefix.
var capabilityName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// podSecurity checks the allow-lists: an entry that cannot match anything
// (a relative host path, a lower-case or CAP_-prefixed capability, an
// invalid ServiceAccount name) is an error rather than a silent no-op.
func podSecurity(in PodSecurity, p *field.Path, errs field.ErrorList) (PodSecurity, field.ErrorList) {
	out := PodSecurity{AllowRunAsRoot: in.AllowRunAsRoot}

	hp := p.Child("allowedHostPaths")
	errs = tooMany(errs, hp, len(in.AllowedHostPaths), MaxAllowedHostPaths)
	errs = eachUnique(errs, hp, in.AllowedHostPaths, func(v string) string {
		if !strings.HasPrefix(v, "/") || path.Clean(v) != v {
			return "must be an absolute, clean path such as /mnt/firebolt"
		}
		return ""
	})
	out.AllowedHostPaths = in.AllowedHostPaths

	cp := p.Child("allowedCapabilities")
	errs = tooMany(errs, cp, len(in.AllowedCapabilities), MaxAllowedCapabilities)
	errs = eachUnique(errs, cp, in.AllowedCapabilities, func(v string) string {
		if !capabilityName.MatchString(v) || strings.HasPrefix(v, "CAP_") {
			return "must be a capability as Kubernetes writes it: upper case, without the CAP_ prefix, e.g. SYS_PTRACE"
		}
		return ""
	})
	out.AllowedCapabilities = in.AllowedCapabilities

	sp := p.Child("allowedServiceAccountNames")
	errs = tooMany(errs, sp, len(in.AllowedServiceAccountNames), MaxAllowedServiceAccountNames)
	errs = eachUnique(errs, sp, in.AllowedServiceAccountNames, func(v string) string {
		if msgs := validation.IsDNS1123Subdomain(v); len(msgs) > 0 {
			return "must be a ServiceAccount name: " + strings.Join(msgs, "; ")
		}
		return ""
	})
	out.AllowedServiceAccountNames = in.AllowedServiceAccountNames

	return out, errs
}

func tooMany(errs field.ErrorList, p *field.Path, n, limit int) field.ErrorList {
	if n > limit {
		errs = append(errs, field.TooMany(p, n, limit))
	}
	return errs
}

// eachUnique reports every entry check refuses (with its reason) and every
// repeated entry.
func eachUnique(errs field.ErrorList, p *field.Path, vs []string, check func(string) string) field.ErrorList {
	seen := make(map[string]bool, len(vs))
	for i, v := range vs {
		if msg := check(v); msg != "" {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		if seen[v] {
			errs = append(errs, field.Duplicate(p.Index(i), v))
		}
		seen[v] = true
	}
	return errs
}
