package podtemplate

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// Merge renders the pod template from three layers, operator < class <
// engine; class and engine may be nil. The per-field rules are in the package
// documentation. Inputs are deep-copied, never modified, and the result
// shares no memory with them.
func Merge(operator corev1.PodTemplateSpec, class, engine *corev1.PodTemplateSpec, r Rules) corev1.PodTemplateSpec {
	out := *operator.DeepCopy()
	var layers []*corev1.PodTemplateSpec
	for _, l := range []*corev1.PodTemplateSpec{class, engine} {
		if l != nil {
			layers = append(layers, l.DeepCopy())
		}
	}

	labels := make([]map[string]string, 0, len(layers)+1)
	annotations := make([]map[string]string, 0, len(layers)+1)
	for _, l := range layers {
		labels = append(labels, l.Labels)
		annotations = append(annotations, l.Annotations)
	}
	out.Labels = mergeMaps(append(labels, out.Labels)...)
	out.Annotations = mergeMaps(append(annotations, out.Annotations)...)

	mergePodSpec(&out.Spec, layers, r)
	return out
}

// mergeMaps layers maps left to right, later keys winning. Nil when every
// map is empty, so an absent map stays absent.
func mergeMaps(ms ...map[string]string) map[string]string {
	var out map[string]string
	for _, m := range ms {
		for k, v := range m {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// pick overwrites *dst with v when v is set. Layers are applied class then
// engine, so the top-most layer that sets a value wins.
func pick[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// mergePodSpec applies the user layers (already private copies) onto out,
// the operator's spec. Fields the operator owns outright (grace period,
// restart policy, DNS identity, host sharing, ephemeral containers) are
// deliberately never read from a layer.
func mergePodSpec(out *corev1.PodSpec, layers []*corev1.PodTemplateSpec, r Rules) {
	opContainers := map[string]bool{}
	for _, list := range [][]corev1.Container{out.Containers, out.InitContainers} {
		for i := range list {
			opContainers[list[i].Name] = true
		}
	}
	opVolumes := map[string]bool{}
	for i := range out.Volumes {
		opVolumes[out.Volumes[i].Name] = true
	}
	primary := primaryIndex(out, layers, r)
	opSecurity := out.SecurityContext
	var userSecurity *corev1.PodSecurityContext

	for _, l := range layers {
		s := &l.Spec

		pick(&out.DNSPolicy, s.DNSPolicy)
		pick(&out.ServiceAccountName, s.ServiceAccountName)
		pick(&out.DeprecatedServiceAccount, s.DeprecatedServiceAccount)
		pick(&out.AutomountServiceAccountToken, s.AutomountServiceAccountToken)
		pick(&out.NodeName, s.NodeName)
		pick(&out.Affinity, s.Affinity)
		pick(&out.SchedulerName, s.SchedulerName)
		pick(&out.PriorityClassName, s.PriorityClassName)
		pick(&out.Priority, s.Priority)
		pick(&out.DNSConfig, s.DNSConfig)
		pick(&out.RuntimeClassName, s.RuntimeClassName)
		pick(&out.EnableServiceLinks, s.EnableServiceLinks)
		pick(&out.PreemptionPolicy, s.PreemptionPolicy)
		pick(&out.SetHostnameAsFQDN, s.SetHostnameAsFQDN)
		pick(&out.OS, s.OS)
		pick(&out.Resources, s.Resources)
		pick(&out.SchedulingGroup, s.SchedulingGroup)
		pick(&userSecurity, s.SecurityContext)
		if len(s.Overhead) > 0 {
			out.Overhead = s.Overhead
		}
		out.NodeSelector = mergeMaps(out.NodeSelector, s.NodeSelector)

		out.ImagePullSecrets = append(out.ImagePullSecrets, s.ImagePullSecrets...)
		out.Tolerations = append(out.Tolerations, s.Tolerations...)
		out.HostAliases = append(out.HostAliases, s.HostAliases...)
		out.ReadinessGates = append(out.ReadinessGates, s.ReadinessGates...)
		out.TopologySpreadConstraints = append(out.TopologySpreadConstraints, s.TopologySpreadConstraints...)
		out.SchedulingGates = append(out.SchedulingGates, s.SchedulingGates...)
		out.ResourceClaims = append(out.ResourceClaims, s.ResourceClaims...)

		mergeLayerLists(out, s, r, opVolumes, opContainers, primary)
	}

	if userSecurity != nil {
		if opSecurity != nil {
			fillUnset(userSecurity, opSecurity)
		}
		out.SecurityContext = userSecurity
	}
}

// mergeLayerLists adds one layer's volumes and containers to out, except
// those the operator renders itself (opVolumes, opContainers) or reserves,
// and merges the layer's primary container into out's at index primary.
func mergeLayerLists(out, s *corev1.PodSpec, r Rules, opVolumes, opContainers map[string]bool, primary int) {
	for i := range s.Volumes {
		if v := s.Volumes[i]; !opVolumes[v.Name] && !r.reservedVolume(v.Name) {
			out.Volumes = append(out.Volumes, v)
		}
	}
	for i := range s.InitContainers {
		if c := s.InitContainers[i]; c.Name != r.Primary && !r.reservedContainer(c.Name) && !opContainers[c.Name] {
			out.InitContainers = append(out.InitContainers, c)
		}
	}
	merged := false
	for i := range s.Containers {
		c := &s.Containers[i]
		switch {
		case c.Name == r.Primary:
			// A second primary is a Validate error; only the first counts.
			if !merged {
				mergePrimary(&out.Containers[primary], c, r)
				merged = true
			}
		case !r.reservedContainer(c.Name) && !opContainers[c.Name]:
			out.Containers = append(out.Containers, *c)
		}
	}
}

// primaryIndex finds the primary in the operator's containers. When the
// operator renders none but a user layer names it, an empty one is put first
// so the user's allowed fields still have somewhere to land.
func primaryIndex(out *corev1.PodSpec, layers []*corev1.PodTemplateSpec, r Rules) int {
	for i := range out.Containers {
		if out.Containers[i].Name == r.Primary {
			return i
		}
	}
	for _, l := range layers {
		if PrimaryContainer(l, r.Primary) != nil {
			out.Containers = append([]corev1.Container{{Name: r.Primary}}, out.Containers...)
			return 0
		}
	}
	return -1
}

// mergePrimary applies one layer's primary container onto dst, reading only
// the fields r allows. Resources, securityContext and lifecycle are whole
// values: a partial override must not inherit the rest from a lower layer.
func mergePrimary(dst, src *corev1.Container, r Rules) {
	a := r.Allow
	if a.Image {
		pick(&dst.Image, src.Image)
		pick(&dst.ImagePullPolicy, src.ImagePullPolicy)
	}
	if a.Resources && HasResources(src.Resources) {
		dst.Resources = src.Resources
	}
	if a.Env {
		for i := range src.Env {
			if !r.reservedEnv(src.Env[i].Name) {
				dst.Env = append(dst.Env, src.Env[i])
			}
		}
	}
	if a.EnvFrom {
		dst.EnvFrom = append(dst.EnvFrom, src.EnvFrom...)
	}
	if a.VolumeMounts {
		for i := range src.VolumeMounts {
			if !r.reservedVolume(src.VolumeMounts[i].Name) {
				dst.VolumeMounts = append(dst.VolumeMounts, src.VolumeMounts[i])
			}
		}
	}
	if a.SecurityContext {
		pick(&dst.SecurityContext, src.SecurityContext)
	}
	if a.Lifecycle {
		pick(&dst.Lifecycle, src.Lifecycle)
	}
	if a.WorkingDir {
		pick(&dst.WorkingDir, src.WorkingDir)
	}
	if a.TerminationMessage {
		pick(&dst.TerminationMessagePath, src.TerminationMessagePath)
		pick(&dst.TerminationMessagePolicy, src.TerminationMessagePolicy)
	}
	if a.VolumeDevices {
		dst.VolumeDevices = append(dst.VolumeDevices, src.VolumeDevices...)
	}
	if a.ResizePolicy {
		dst.ResizePolicy = append(dst.ResizePolicy, src.ResizePolicy...)
	}
}

// fillUnset copies every field of defaults into dst that dst leaves unset.
// It walks the struct by reflection so a field Kubernetes adds to
// PodSecurityContext is defaulted the same way without a code change.
func fillUnset(dst, defaults *corev1.PodSecurityContext) {
	d := reflect.ValueOf(dst).Elem()
	s := reflect.ValueOf(defaults).Elem()
	for i := 0; i < d.NumField(); i++ {
		if d.Field(i).IsZero() && !s.Field(i).IsZero() {
			d.Field(i).Set(s.Field(i))
		}
	}
}
