package podtemplate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Error details, one place so every composer reports the same words.
const (
	detailOperatorOwned   = "operator-owned"
	detailMetadataOnly    = "only labels and annotations may be set on a pod template"
	detailHostSharing     = "not permitted on operator-managed pods"
	detailEphemeral       = "not permitted on a pod template"
	detailReservedEnv     = "reserved name: set by the operator"
	detailReservedMount   = "reserved name: mounted by the operator"
	detailReservedVolume  = "reserved name: rendered by the operator"
	detailReservedCtr     = "reserved name: container added by the operator"
	detailNameRequired    = "a name is required"
	detailClassConflict   = "name already used by the class template"
	detailReservedKeyTmpl = "keys with the %q prefix are reserved for the operator"
)

// Validate reports every part of a user pod template that the operator owns
// under r: pod-template metadata other than labels and annotations, keys
// under ReservedKeyPrefix, pod fields the operator fixes, primary-container
// fields outside r.Allow, reserved env and mount names on the primary,
// reserved volume and container names, duplicate names, and sidecars or init
// containers mounting Secret-backed operator volumes, and the privileges no
// function input may allow (validatePrivileges). path leads to the template
// (e.g. spec.template). A nil template is valid.
func Validate(tpl *corev1.PodTemplateSpec, r Rules, path *field.Path) field.ErrorList {
	if tpl == nil {
		return nil
	}
	spec := path.Child("spec")
	return slices.Concat(
		validateMetadata(&tpl.ObjectMeta, path.Child("metadata")),
		validatePodFields(&tpl.Spec, spec),
		validateVolumes(tpl.Spec.Volumes, r, spec.Child("volumes")),
		validateContainers(&tpl.Spec, r, spec),
		validatePrivileges(tpl, path),
	)
}

// Rejected is the message of a condition that refuses the template at path
// for errs: every violation with its field path.
func Rejected(path string, errs field.ErrorList) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return path + " is rejected: " + strings.Join(msgs, "; ")
}

// ValidateLayers reports names the engine template reuses from the class
// template. Merge concatenates class and engine sidecars, init containers and
// volumes, so a shared name would render a pod the API server refuses.
// enginePath leads to the engine template.
func ValidateLayers(class, engine *corev1.PodTemplateSpec, r Rules, enginePath *field.Path) field.ErrorList {
	if class == nil || engine == nil {
		return nil
	}
	classContainers := map[string]bool{}
	for _, list := range [][]corev1.Container{class.Spec.Containers, class.Spec.InitContainers} {
		for i := range list {
			if n := list[i].Name; n != "" && n != r.Primary {
				classContainers[n] = true
			}
		}
	}
	classVolumes := map[string]bool{}
	for i := range class.Spec.Volumes {
		classVolumes[class.Spec.Volumes[i].Name] = true
	}

	spec := enginePath.Child("spec")
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		list []corev1.Container
	}{{"containers", engine.Spec.Containers}, {"initContainers", engine.Spec.InitContainers}} {
		for i := range l.list {
			n := l.list[i].Name
			if n != "" && n != r.Primary && classContainers[n] {
				errs = append(errs, field.Forbidden(entry(spec.Child(l.name), n, i), detailClassConflict))
			}
		}
	}
	for i := range engine.Spec.Volumes {
		if n := engine.Spec.Volumes[i].Name; n != "" && classVolumes[n] {
			errs = append(errs, field.Forbidden(entry(spec.Child("volumes"), n, i), detailClassConflict))
		}
	}
	return errs
}

// entry is the path of a list item: by name when it has one, else by index.
func entry(list *field.Path, name string, i int) *field.Path {
	if name == "" {
		return list.Index(i)
	}
	return list.Key(name)
}

func validateMetadata(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	set := []struct {
		field string
		set   bool
	}{
		{"name", m.Name != ""},
		{"generateName", m.GenerateName != ""},
		{"namespace", m.Namespace != ""},
		{"selfLink", m.SelfLink != ""}, //nolint:staticcheck // Deprecated for servers to fill; a template that sets it is still refused.
		{"uid", m.UID != ""},
		{"resourceVersion", m.ResourceVersion != ""},
		{"generation", m.Generation != 0},
		{"creationTimestamp", !m.CreationTimestamp.IsZero()},
		{"deletionTimestamp", m.DeletionTimestamp != nil},
		{"deletionGracePeriodSeconds", m.DeletionGracePeriodSeconds != nil},
		{"ownerReferences", len(m.OwnerReferences) > 0},
		{"finalizers", len(m.Finalizers) > 0},
		{"managedFields", len(m.ManagedFields) > 0},
	}
	var errs field.ErrorList
	for _, f := range set {
		if f.set {
			errs = append(errs, field.Forbidden(p.Child(f.field), detailMetadataOnly))
		}
	}
	errs = append(errs, reservedKeys(m.Labels, p.Child("labels"))...)
	errs = append(errs, reservedKeys(m.Annotations, p.Child("annotations"))...)
	return errs
}

// reservedKeys reports keys under ReservedKeyPrefix, sorted so the result
// does not depend on map order.
func reservedKeys(m map[string]string, p *field.Path) field.ErrorList {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, ReservedKeyPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	errs := make(field.ErrorList, 0, len(keys))
	for _, k := range keys {
		errs = append(errs, field.Forbidden(p.Key(k), fmt.Sprintf(detailReservedKeyTmpl, ReservedKeyPrefix)))
	}
	return errs
}

// validatePodFields rejects pod fields that are the operator's or the
// workload controller's (grace period, DNS identity, restart policy,
// deadline) and host namespace sharing, which would undo the isolation of a
// long-lived data-plane pod.
func validatePodFields(s *corev1.PodSpec, p *field.Path) field.ErrorList {
	rules := []struct {
		field  string
		set    bool
		detail string
	}{
		{"terminationGracePeriodSeconds", s.TerminationGracePeriodSeconds != nil, detailOperatorOwned},
		{"activeDeadlineSeconds", s.ActiveDeadlineSeconds != nil, detailOperatorOwned},
		{"restartPolicy", s.RestartPolicy != "", detailOperatorOwned},
		{"hostname", s.Hostname != "", detailOperatorOwned},
		{"hostnameOverride", s.HostnameOverride != nil, detailOperatorOwned},
		{"subdomain", s.Subdomain != "", detailOperatorOwned},
		{"hostNetwork", s.HostNetwork, detailHostSharing},
		{"hostPID", s.HostPID, detailHostSharing},
		{"hostIPC", s.HostIPC, detailHostSharing},
		{"shareProcessNamespace", s.ShareProcessNamespace != nil, detailHostSharing},
		{"hostUsers", s.HostUsers != nil, detailHostSharing},
		{"ephemeralContainers", len(s.EphemeralContainers) > 0, detailEphemeral},
	}
	var errs field.ErrorList
	for _, f := range rules {
		if f.set {
			errs = append(errs, field.Forbidden(p.Child(f.field), f.detail))
		}
	}
	return errs
}

func validateVolumes(vols []corev1.Volume, r Rules, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i := range vols {
		n := vols[i].Name
		vp := entry(p, n, i)
		switch {
		case n == "":
			errs = append(errs, field.Required(vp.Child("name"), detailNameRequired))
		case r.reservedVolume(n):
			errs = append(errs, field.Forbidden(vp, detailReservedVolume))
		case seen[n]:
			errs = append(errs, field.Duplicate(vp, n))
		}
		seen[n] = true
	}
	return errs
}

// validateContainers walks containers and init containers together because
// Kubernetes requires names to be unique across both lists.
func validateContainers(s *corev1.PodSpec, r Rules, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}

	cp := p.Child("containers")
	for i := range s.Containers {
		c := &s.Containers[i]
		path := entry(cp, c.Name, i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(path.Child("name"), detailNameRequired))
			errs = append(errs, secretMounts(c, r, path)...)
		case seen[c.Name]:
			errs = append(errs, field.Duplicate(path, c.Name))
		case c.Name == r.Primary:
			errs = append(errs, validatePrimary(c, r, path)...)
		case r.reservedContainer(c.Name):
			errs = append(errs, field.Forbidden(path, detailReservedCtr))
		default:
			errs = append(errs, secretMounts(c, r, path)...)
		}
		seen[c.Name] = true
	}

	ip := p.Child("initContainers")
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		path := entry(ip, c.Name, i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(path.Child("name"), detailNameRequired))
			errs = append(errs, secretMounts(c, r, path)...)
		case c.Name == r.Primary:
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("reserved name: the operator's %q container", r.Primary)))
		case r.reservedContainer(c.Name):
			errs = append(errs, field.Forbidden(path, detailReservedCtr))
		case seen[c.Name]:
			errs = append(errs, field.Duplicate(path, c.Name))
		default:
			errs = append(errs, secretMounts(c, r, path)...)
		}
		seen[c.Name] = true
	}
	return errs
}

// secretMounts rejects a sidecar or init container mounting one of the
// operator's Secret-backed volumes: its image and command are the template
// author's, so the mount would hand them credentials the pod-template model
// never grants.
func secretMounts(c *corev1.Container, r Rules, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range c.VolumeMounts {
		n := c.VolumeMounts[i].Name
		if r.secretVolume(n) {
			errs = append(errs, field.Forbidden(entry(p.Child("volumeMounts"), n, i),
				fmt.Sprintf("Secret-backed operator volume: only the %q container may mount it", r.Primary)))
		}
	}
	return errs
}

// validatePrimary is an allowlist: the fields below are every field of
// corev1.Container except name (TestContainerFieldsClassified fails when a
// Kubernetes upgrade adds one, so it cannot slip through unjudged).
func validatePrimary(c *corev1.Container, r Rules, p *field.Path) field.ErrorList {
	a := r.Allow
	rules := []struct {
		field string
		set   bool
	}{
		{"image", !a.Image && c.Image != ""},
		{"imagePullPolicy", !a.Image && c.ImagePullPolicy != ""},
		{"command", len(c.Command) > 0},
		{"args", len(c.Args) > 0},
		{"workingDir", !a.WorkingDir && c.WorkingDir != ""},
		{"ports", len(c.Ports) > 0},
		{"envFrom", !a.EnvFrom && len(c.EnvFrom) > 0},
		{"env", !a.Env && len(c.Env) > 0},
		{"resources", !a.Resources && HasResources(c.Resources)},
		{"resizePolicy", !a.ResizePolicy && len(c.ResizePolicy) > 0},
		{"restartPolicy", c.RestartPolicy != nil},
		{"restartPolicyRules", len(c.RestartPolicyRules) > 0},
		{"volumeMounts", !a.VolumeMounts && len(c.VolumeMounts) > 0},
		{"volumeDevices", !a.VolumeDevices && len(c.VolumeDevices) > 0},
		{"livenessProbe", c.LivenessProbe != nil},
		{"readinessProbe", c.ReadinessProbe != nil},
		{"startupProbe", c.StartupProbe != nil},
		{"lifecycle", !a.Lifecycle && c.Lifecycle != nil},
		{"terminationMessagePath", !a.TerminationMessage && c.TerminationMessagePath != ""},
		{"terminationMessagePolicy", !a.TerminationMessage && c.TerminationMessagePolicy != ""},
		{"securityContext", !a.SecurityContext && c.SecurityContext != nil},
		{"stdin", c.Stdin},
		{"stdinOnce", c.StdinOnce},
		{"tty", c.TTY},
	}
	var errs field.ErrorList
	for _, f := range rules {
		if f.set {
			errs = append(errs, field.Forbidden(p.Child(f.field), detailOperatorOwned))
		}
	}
	if a.Env {
		for i := range c.Env {
			if n := c.Env[i].Name; r.reservedEnv(n) {
				errs = append(errs, field.Forbidden(entry(p.Child("env"), n, i), detailReservedEnv))
			}
		}
	}
	if a.VolumeMounts {
		for i := range c.VolumeMounts {
			if n := c.VolumeMounts[i].Name; r.reservedVolume(n) {
				errs = append(errs, field.Forbidden(entry(p.Child("volumeMounts"), n, i), detailReservedMount))
			}
		}
	}
	return errs
}

// HasResources reports whether a container's resources say anything. The
// primary container's resources are taken wholesale from the top-most layer
// that says something, so "empty" must mean nothing at all.
func HasResources(r corev1.ResourceRequirements) bool {
	return len(r.Requests) > 0 || len(r.Limits) > 0 || len(r.Claims) > 0
}

// PrimaryContainer returns the first container named name in tpl, or nil.
func PrimaryContainer(tpl *corev1.PodTemplateSpec, name string) *corev1.Container {
	if tpl == nil {
		return nil
	}
	for i := range tpl.Spec.Containers {
		if tpl.Spec.Containers[i].Name == name {
			return &tpl.Spec.Containers[i]
		}
	}
	return nil
}
