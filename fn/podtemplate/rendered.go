package podtemplate

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
)

// CheckRendered reports what no pod the function renders may carry: host
// namespaces, ephemeral containers, whatever no function input may allow,
// and whatever the input's allow-list ps does not allow. It is for pod
// templates the function reads back rather than renders, such as a
// generation replayed from the composite's status: whoever can write that
// status must not be able to run a pod the claim could not ask for.
func CheckRendered(tpl *corev1.PodTemplateSpec, ps v1beta1.PodSecurity, p *field.Path) field.ErrorList {
	s, spec := &tpl.Spec, p.Child("spec")
	var errs field.ErrorList
	for _, f := range []struct {
		field  string
		set    bool
		detail string
	}{
		{"hostNetwork", s.HostNetwork, detailHostSharing},
		{"hostPID", s.HostPID, detailHostSharing},
		{"hostIPC", s.HostIPC, detailHostSharing},
		{"shareProcessNamespace", s.ShareProcessNamespace != nil && *s.ShareProcessNamespace, detailHostSharing},
		{"hostUsers", s.HostUsers != nil && !*s.HostUsers, detailHostSharing},
		{"ephemeralContainers", len(s.EphemeralContainers) > 0, detailEphemeral},
	} {
		if f.set {
			errs = append(errs, field.Forbidden(spec.Child(f.field), f.detail))
		}
	}
	errs = append(errs, validatePrivileges(tpl, p)...)
	return append(errs, CheckPodSecurity(tpl, ps, p)...)
}
