package instance

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// The metadata pod, as the original operator's. The metadata service runs as
// its image's built-in user, which differs between the legacy and the
// metadata-ng images; files in each image belong to that user.
const (
	metadataUID         = int64(1111)
	metadataNGUID       = int64(1112)
	metadataPortName    = "grpc"
	metadataConfigMount = "/configs"
	metadataCredsMount  = "/secrets/postgres"
	metadataGracePeriod = int64(30)
)

// metadataParams are the facts the metadata Deployment depends on.
type metadataParams struct {
	Image string
	NG    bool
	// CredentialsSecret is the Secret mounted as the PostgreSQL
	// credentials: the internal one or the user's.
	CredentialsSecret string
	// ConfigHash rolls the pods when config.yaml or the credentials
	// change.
	ConfigHash string
	// Template is the user's spec.metadata.template, already validated.
	Template *corev1.PodTemplateSpec
}

func renderMetadataConfigMap(n names, config string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(n, n.metadataConfig(), componentMetadata),
		Data:       map[string]string{metadataConfigKey: config},
	}
}

// renderMetadataDeployment renders the metadata service. It runs one
// replica and a rollout stops the old pod before starting the new one
// (maxSurge 0, maxUnavailable 1): the service assumes it is the only writer
// of its PostgreSQL schema. There is no PodDisruptionBudget: with one
// replica it could only block node drains.
func renderMetadataDeployment(n names, p metadataParams) *appsv1.Deployment {
	uid := metadataUID
	if p.NG {
		uid = metadataNGUID
	}
	labels := n.labels(componentMetadata)
	operator := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      labels,
			Annotations: map[string]string{AnnotationConfigHash: p.ConfigHash},
		},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To(metadataGracePeriod),
			SecurityContext: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:    podtemplate.MetadataContainer,
				Image:   p.Image,
				Command: []string{"/dedicated-pensieve", "--config", metadataConfigMount + "/" + metadataConfigKey},
				Ports:   []corev1.ContainerPort{{Name: metadataPortName, ContainerPort: MetadataPort, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{
					{Name: "POSTGRES_USERNAME_FILE", Value: metadataCredsMount + "/" + KeyUsername},
					{Name: "POSTGRES_PASSWORD_FILE", Value: metadataCredsMount + "/" + KeyPassword},
				},
				LivenessProbe: &corev1.Probe{
					ProbeHandler:        corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(MetadataPort)}},
					InitialDelaySeconds: 2,
					PeriodSeconds:       10,
					FailureThreshold:    3,
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:        corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: MetadataPort, Service: ptr.To("")}},
					InitialDelaySeconds: 2,
					PeriodSeconds:       5,
					FailureThreshold:    3,
				},
				SecurityContext: hardenedContainer(uid),
				VolumeMounts: []corev1.VolumeMount{
					{Name: podtemplate.VolumeMetadataConfig, MountPath: metadataConfigMount, ReadOnly: true},
					{Name: podtemplate.VolumePostgresCreds, MountPath: metadataCredsMount, ReadOnly: true},
					{Name: podtemplate.VolumeMetadataTmp, MountPath: "/tmp"},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: podtemplate.VolumeMetadataConfig, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: n.metadataConfig()},
				}}},
				{Name: podtemplate.VolumePostgresCreds, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
					SecretName: p.CredentialsSecret,
				}}},
				emptyDirVolume(podtemplate.VolumeMetadataTmp),
			},
		},
	}
	tpl := podtemplate.Merge(operator, nil, p.Template, podtemplate.MetadataRules)

	// Forced after the merge: a user may add to the pod but not run it as
	// another user (files in the image belong to uid), hand it a service
	// account token (it never calls the API server) or service links.
	sc := tpl.Spec.SecurityContext
	sc.RunAsNonRoot = ptr.To(true)
	sc.RunAsUser = &uid
	sc.RunAsGroup = &uid
	tpl.Spec.AutomountServiceAccountToken = ptr.To(false)
	tpl.Spec.EnableServiceLinks = ptr.To(false)

	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: objectMeta(n, n.metadata(), componentMetadata),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			// The metadata service must never have two writers. A rolling
			// update with maxSurge 0 still starts the new pod while the old
			// one is terminating; Recreate waits until it is gone.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: tpl,
		},
	}
}

func renderMetadataService(n names) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(n, n.metadata(), componentMetadata),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: n.labels(componentMetadata),
			Ports: []corev1.ServicePort{{
				Name:       metadataPortName,
				Port:       MetadataPort,
				TargetPort: intstr.FromInt32(MetadataPort),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}
