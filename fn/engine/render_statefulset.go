package engine

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// Operator-owned pod constants.
const (
	terminationGracePeriodSeconds = 60
	engineUID                     = 3473
	portWebUI                     = 9100

	dataDir     = "/var/lib/firebolt"
	runtimeDir  = "/run/firebolt"
	configPath  = dataDir + "/" + ConfigKey
	podIndexEnv = "metadata.labels['apps.kubernetes.io/pod-index']"
)

// engineScript starts the engine as node POD_INDEX. POD_INDEX comes from the
// pod-index label; clusters too old to set it fall back to the ordinal at
// the end of the StatefulSet pod's hostname.
const engineScript = `if [ -z "${POD_INDEX}" ]; then POD_INDEX="${HOSTNAME##*-}"; fi
exec /opt/firebolt/firebolt server --node "${POD_INDEX}" --data-dir ` + dataDir + `
`

// renderStatefulSet builds the generation's StatefulSet.
func renderStatefulSet(r renderInput) *appsv1.StatefulSet {
	labels := generationLabels(r.Engine, r.Gen)
	storage := effectiveStorage(r.Spec, r.Class)

	var classTpl *corev1.PodTemplateSpec
	if r.Class != nil {
		classTpl = &r.Class.Template
	}
	tpl := podtemplate.Merge(operatorPod(r, storage, classTpl), classTpl, r.Spec.Template, podtemplate.EngineRules)
	// The selector labels are the operator's whatever a layer says; the
	// rules reject firebolt.io/ keys, this makes it hold regardless.
	if tpl.Labels == nil {
		tpl.Labels = map[string]string{}
	}
	for k, v := range labels {
		tpl.Labels[k] = v
	}

	annotations := map[string]string{}
	if r.Auth != nil {
		// On the pod template too: the engine reads its credentials at
		// start, so a change that reaches only them (a new version of the
		// admin password's Secret) must still restart the pods when it is
		// applied in place (rollout: phased).
		h := r.Auth.Hash()
		annotations[signing.AnnotationAuthHash] = h
		if tpl.Annotations == nil {
			tpl.Annotations = map[string]string{}
		}
		tpl.Annotations[signing.AnnotationAuthHash] = h
	}
	if r.TLS != nil {
		// The hash on the pod template too, as the auth hash: the engine
		// reads its certificate at start. The TLS itself is for the
		// function alone: the generation's Certificate is rendered from it.
		h := engineTLSHash(*r.TLS)
		annotations[AnnotationEngineTLSHash] = h
		annotations[AnnotationEngineTLS] = engineTLSAnnotation(*r.TLS)
		if tpl.Annotations == nil {
			tpl.Annotations = map[string]string{}
		}
		tpl.Annotations[AnnotationEngineTLSHash] = h
	}
	if o := r.Spec.MetadataEndpointOverride; o != nil && *o != "" {
		annotations[AnnotationMetadataOverride] = *o
	}
	if r.CustomConfig != nil {
		annotations[AnnotationCustomConfigHash] = podtemplate.ContentHash(r.CustomConfig)
	}
	if classTpl != nil {
		annotations[AnnotationEngineClassHash] = podtemplate.Hash(classTpl)
	}
	if len(annotations) == 0 {
		annotations = nil
	}

	sts := &appsv1.StatefulSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        statefulSetName(r.Engine, r.Gen),
			Namespace:   r.Namespace,
			Labels:      generationLabels(r.Engine, r.Gen),
			Annotations: annotations,
		},
		Spec: appsv1.StatefulSetSpec{
			ServiceName:         headlessName(r.Engine, r.Gen),
			Replicas:            ptr.To(r.Spec.Replicas),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: generationLabels(r.Engine, r.Gen)},
			Template:            tpl,
			// A retired generation's claims go with it; scaling never happens
			// in place, so Retain only guards against a manual scale-down.
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
		},
	}
	if pvc := storage.PersistentVolumeClaim; pvc != nil {
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{volumeClaimTemplate(r, pvc)}
	}
	if r.Phased {
		// No pod moves to a new template until a step lets it go: the
		// rollout lowers this partition one pod at a time (inplace.go).
		sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{
			Type:          appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(r.Spec.Replicas)},
		}
		if sts.Annotations == nil {
			sts.Annotations = map[string]string{}
		}
		sts.Annotations[AnnotationTemplateHash] = podtemplate.Hash(&sts.Spec.Template)
	}
	return sts
}

func volumeClaimTemplate(r renderInput, s *v1alpha1.PersistentVolumeClaimStorageSpec) corev1.PersistentVolumeClaim {
	size := s.Size
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	modes := s.AccessModes
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{},
		ObjectMeta: metav1.ObjectMeta{Name: podtemplate.VolumeData, Labels: generationLabels(r.Engine, r.Gen)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: s.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
}

// operatorPod is the operator layer of the pod-template merge.
func operatorPod(r renderInput, storage v1alpha1.EngineStorageSpec, classTpl *corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	image := effectiveImage(r.Images.Engine, classTpl, r.Spec.Template)
	engine := engineContainer(image)
	if r.Auth != nil {
		engine.VolumeMounts = append(engine.VolumeMounts, r.Auth.Mounts()...)
	}
	if r.TLS != nil {
		engine.Args = []string{engineTLSScript + engineScript}
		engine.VolumeMounts = append(engine.VolumeMounts, engineTLSMount())
	}
	containers := []corev1.Container{engine}
	volumes := []corev1.Volume{
		{Name: podtemplate.VolumeEngineConfig, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMapName(r.Engine, r.Gen)}},
		}},
		{Name: podtemplate.VolumeRuntime, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	switch {
	case storage.HostPath != nil:
		volumes = append(volumes, corev1.Volume{Name: podtemplate.VolumeData, VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: storage.HostPath.Path, Type: storage.HostPath.Type},
		}})
	case storage.EmptyDir != nil:
		volumes = append(volumes, corev1.Volume{Name: podtemplate.VolumeData, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: storage.EmptyDir.Medium, SizeLimit: storage.EmptyDir.SizeLimit},
		}})
	}
	if r.Auth != nil {
		volumes = append(volumes, r.Auth.Volumes()...)
	}
	if r.TLS != nil {
		volumes = append(volumes, engineTLSVolume(r))
	}
	if effectiveUISidecar(r.Spec, r.Class) {
		containers = append(containers, engineWebContainer(r.Images.EngineUI, engineCoreURL(r.TLS != nil)))
		volumes = append(volumes, corev1.Volume{Name: podtemplate.VolumeEngineWeb, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: generationLabels(r.Engine, r.Gen)},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](terminationGracePeriodSeconds),
			EnableServiceLinks:            ptr.To(false),
			// No API token unless a template asks for one (and the input's
			// allow-list permits its ServiceAccount): the engine never calls
			// the API server, and workload-identity webhooks (IRSA, Pod
			// Identity, Azure) project their own tokens regardless.
			AutomountServiceAccountToken: ptr.To(false),
			// No seccomp profile unless a template sets one: the engine
			// needs io_uring, which the RuntimeDefault profile of
			// containerd >= 2.0 and Docker >= 25 blocks.
			SecurityContext: &corev1.PodSecurityContext{
				FSGroup:             ptr.To[int64](engineUID),
				FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
			},
			Containers: containers,
			Volumes:    volumes,
		},
	}
}

func engineContainer(image string) corev1.Container {
	return corev1.Container{
		Name:            podtemplate.EngineContainer,
		Image:           image,
		ImagePullPolicy: defaultPullPolicy(image),
		Command:         []string{"/bin/bash", "-c"},
		Args:            []string{engineScript},
		Ports: []corev1.ContainerPort{
			{Name: "http-query", ContainerPort: PortQuery, Protocol: corev1.ProtocolTCP},
			{Name: "health", ContainerPort: PortHealth, Protocol: corev1.ProtocolTCP},
			{Name: "metrics", ContainerPort: PortMetrics, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{
			{Name: podtemplate.EnvPodIndex, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: podIndexEnv}}},
			{Name: podtemplate.EnvAWSEC2MetadataClientEnabled, Value: "true"},
		},
		ReadinessProbe:  httpProbe("/health/ready", PortHealth, 1, 3, 3, 6),
		LivenessProbe:   httpProbe("/health/live", PortHealth, 2, 5, 3, 6),
		StartupProbe:    httpProbe("/health/live", PortHealth, 0, 5, 3, 30),
		SecurityContext: hardenedSecurityContext(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: podtemplate.VolumeData, MountPath: dataDir},
			{Name: podtemplate.VolumeEngineConfig, MountPath: configPath, SubPath: ConfigKey, ReadOnly: true},
			{Name: podtemplate.VolumeRuntime, MountPath: runtimeDir},
		},
	}
}

// engineWebContainer is the web UI sidecar, reaching the engine at
// coreURL.
func engineWebContainer(image, coreURL string) corev1.Container {
	return corev1.Container{
		Name:            podtemplate.EngineWebContainer,
		Image:           image,
		ImagePullPolicy: defaultPullPolicy(image),
		Env:             []corev1.EnvVar{{Name: "FIREBOLT_CORE_URL", Value: coreURL}},
		Ports:           []corev1.ContainerPort{{Name: "web-ui", ContainerPort: portWebUI, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe:  httpProbe("/", portWebUI, 1, 3, 2, 3),
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("25m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		SecurityContext: hardenedSecurityContext(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: podtemplate.VolumeEngineWeb, MountPath: "/var/tmp", SubPath: "tmp"},
			{Name: podtemplate.VolumeEngineWeb, MountPath: "/var/cache/nginx", SubPath: "cache"},
			{Name: podtemplate.VolumeEngineWeb, MountPath: "/var/run/nginx", SubPath: "run"},
		},
	}
}

func httpProbe(path string, port, initialDelay, period, timeout, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}},
		InitialDelaySeconds: initialDelay,
		PeriodSeconds:       period,
		TimeoutSeconds:      timeout,
		FailureThreshold:    failures,
	}
}

func hardenedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr.To[int64](engineUID),
		RunAsGroup:               ptr.To[int64](engineUID),
		RunAsNonRoot:             ptr.To(true),
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// effectiveImage is the engine template's image, else the class's, else
// the default. The pull policy default follows the image that wins, so it
// is resolved here rather than by the merge.
func effectiveImage(def string, class, engine *corev1.PodTemplateSpec) string {
	for _, t := range []*corev1.PodTemplateSpec{engine, class} {
		if c := podtemplate.PrimaryContainer(t, podtemplate.EngineContainer); c != nil && c.Image != "" {
			return c.Image
		}
	}
	return def
}

// defaultPullPolicy is Always for a floating tag (latest, dev, or none) and
// IfNotPresent otherwise, as the original.
func defaultPullPolicy(image string) corev1.PullPolicy {
	if strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	tag := ""
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		tag = image[i+1:]
	}
	switch tag {
	case "", "latest", "dev":
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}
