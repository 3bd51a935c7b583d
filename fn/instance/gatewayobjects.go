package instance

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/fn/instance/envoyconfig"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// The gateway pod, as the original operator's: Envoy as the image's envoy
// user, its config mounted from the ConfigMap.
const (
	gatewayUID          = int64(101)
	gatewayPortName     = "http"
	gatewayMetricsName  = "metrics"
	gatewayConfigMount  = envoyconfig.ConfigMount
	gatewayGracePeriod  = int64(15)
	defaultGatewayCount = int32(2)

	// gatewayDrainSeconds is how long preStop keeps Envoy alive after
	// failing its health check: long enough for the readiness probe
	// (2 s period, 2 failures) to take the pod out of the Service and for
	// requests in flight to finish, short of the grace period.
	gatewayDrainSeconds = 8
)

// gatewayParams are the facts the gateway Deployment depends on.
type gatewayParams struct {
	Image       string
	Replicas    int32
	MetricsPort int32
	ConfigHash  string
	// Files are the ConfigMap's keys, all mounted.
	Files []string
	// Posture is the client listener's TLS: the Secrets to mount, and
	// whether the rollout stops every old pod first.
	Posture posture
	// Engine is engine TLS: the CA bundle and CRL mounted for upstream
	// TLS.
	Engine engineTLS
	// Template is the user's spec.gateway.template, already validated.
	Template *corev1.PodTemplateSpec
	// WakeAgent is the wake agent's image; the sidecar runs only while the
	// gateway has the instance's own service account (wakeEnabled).
	WakeAgent string
}

// userServiceAccount is the service account the user's gateway template
// names, if any: then the user owns the gateway's identity and its RBAC.
func userServiceAccount(t *corev1.PodTemplateSpec) string {
	if t == nil {
		return ""
	}
	return t.Spec.ServiceAccountName
}

func renderGatewayConfigMap(n names, files map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(n, n.gatewayConfig(), componentGateway),
		Data:       files,
	}
}

// tlsVolumes are the listener's Secrets as the gateway container mounts
// them: the certificate and key, and the client CA with its CRL in one
// projected volume, so that one swap of the directory Envoy watches
// carries both.
func tlsVolumes(p posture) ([]corev1.Volume, []corev1.VolumeMount) {
	if p.cert == "" || p.listener.Closed {
		return nil, nil
	}
	vols := make([]corev1.Volume, 0, 2)
	mounts := make([]corev1.VolumeMount, 0, 2)
	vols = append(vols, corev1.Volume{Name: podtemplate.VolumeGatewayTLS, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: p.cert,
		Items: []corev1.KeyToPath{
			{Key: envoyconfig.KeyCertificate, Path: envoyconfig.KeyCertificate},
			{Key: envoyconfig.KeyPrivateKey, Path: envoyconfig.KeyPrivateKey},
		},
	}}})
	mounts = append(mounts, corev1.VolumeMount{Name: podtemplate.VolumeGatewayTLS, MountPath: envoyconfig.GatewayCertDir, ReadOnly: true})
	if p.clientCA == "" {
		return vols, mounts
	}
	sources := []corev1.VolumeProjection{{Secret: &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: p.clientCA},
		Items:                []corev1.KeyToPath{{Key: envoyconfig.KeyCA, Path: envoyconfig.KeyCA}},
	}}}
	if p.crl != "" {
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: p.crl},
			Items:                []corev1.KeyToPath{{Key: envoyconfig.KeyCRL, Path: envoyconfig.KeyCRL}},
		}})
	}
	vols = append(vols, corev1.Volume{Name: podtemplate.VolumeClientCA, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}})
	mounts = append(mounts, corev1.VolumeMount{Name: podtemplate.VolumeClientCA, MountPath: envoyconfig.ClientTrustDir, ReadOnly: true})
	return vols, mounts
}

// preStopDrain fails Envoy's health check through the loopback admin port
// (so /healthz answers 503 and the pod leaves the Service) and then waits
// while requests in flight finish. bash's /dev/tcp needs no curl in the
// image.
func preStopDrain() []string {
	script := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && printf 'POST /healthcheck/fail HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n' >&3; sleep %d`,
		envoyconfig.AdminPort, gatewayDrainSeconds)
	return []string{"/bin/bash", "-c", script}
}

func renderGatewayDeployment(n names, p gatewayParams) *appsv1.Deployment {
	labels := n.labels(componentGateway)
	uid := gatewayUID
	healthz := func(period, timeout, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: envoyconfig.HealthPath,
				Port: intstr.FromString(gatewayMetricsName),
			}},
			PeriodSeconds:    period,
			TimeoutSeconds:   timeout,
			FailureThreshold: failures,
		}
	}
	operator := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      labels,
			Annotations: map[string]string{AnnotationConfigHash: p.ConfigHash},
		},
		Spec: corev1.PodSpec{
			ServiceAccountName:            n.gateway(),
			TerminationGracePeriodSeconds: ptr.To(gatewayGracePeriod),
			// No pod securityContext, so no seccomp profile, as the
			// original: the gateway template's passes through unchanged.
			Containers: []corev1.Container{{
				Name:  podtemplate.GatewayContainer,
				Image: p.Image,
				Args:  []string{"envoy", "-c", gatewayConfigMount + "/" + envoyconfig.ConfigKey},
				Ports: []corev1.ContainerPort{
					{Name: gatewayPortName, ContainerPort: envoyconfig.ListenerPort, Protocol: corev1.ProtocolTCP},
					{Name: gatewayMetricsName, ContainerPort: p.MetricsPort, Protocol: corev1.ProtocolTCP},
				},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
					Exec: &corev1.ExecAction{Command: preStopDrain()},
				}},
				LivenessProbe:   healthz(15, 3, 3),
				ReadinessProbe:  healthz(2, 2, 2),
				SecurityContext: hardenedContainer(uid),
				VolumeMounts: []corev1.VolumeMount{
					{Name: podtemplate.VolumeGatewayConfig, MountPath: gatewayConfigMount, ReadOnly: true},
					{Name: podtemplate.VolumeGatewayTmp, MountPath: "/tmp"},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: podtemplate.VolumeGatewayConfig, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: n.gatewayConfig()},
					Items:                configItems(p.Files),
				}}},
				emptyDirVolume(podtemplate.VolumeGatewayTmp),
			},
		},
	}
	if vols, mounts := tlsVolumes(p.Posture); len(vols) > 0 {
		primary := &operator.Spec.Containers[0]
		primary.VolumeMounts = append(primary.VolumeMounts, mounts...)
		operator.Spec.Volumes = append(operator.Spec.Volumes, vols...)
	}
	if vols, mounts := engineTLSVolumes(p.Engine); len(vols) > 0 {
		primary := &operator.Spec.Containers[0]
		primary.VolumeMounts = append(primary.VolumeMounts, mounts...)
		operator.Spec.Volumes = append(operator.Spec.Volumes, vols...)
	}
	wake := wakeEnabled(p.Template)
	if wake {
		operator.Spec.Containers = append(operator.Spec.Containers, wakeAgentSidecar(p.WakeAgent))
		operator.Spec.Volumes = append(operator.Spec.Volumes, wakeAgentTokenVolume())
	}
	tpl := podtemplate.Merge(operator, nil, p.Template, podtemplate.GatewayRules)

	// The wake agent is the only consumer of the operator's service
	// account, and its token is projected into its container alone; a
	// user's service account is the user's business.
	if wake {
		tpl.Spec.AutomountServiceAccountToken = ptr.To(false)
		withEnvoyMemoryLimit(&tpl)
	}
	tpl.Spec.EnableServiceLinks = ptr.To(false)

	maxSurge, maxUnavailable := intstr.FromString("25%"), intstr.FromInt32(0)
	if p.Posture.staging {
		// Every pod of the weaker posture stops before a closed one
		// starts.
		maxSurge, maxUnavailable = intstr.FromInt32(0), intstr.FromString("100%")
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: objectMeta(n, n.gateway(), componentGateway),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(p.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable},
			},
			Template: tpl,
		},
	}
}

// configItems mounts each ConfigMap key at its own name; with no TLS that
// is envoy.yaml alone, as before TLS existed.
func configItems(keys []string) []corev1.KeyToPath {
	if len(keys) == 0 {
		keys = []string{envoyconfig.ConfigKey}
	}
	items := make([]corev1.KeyToPath, 0, len(keys))
	for _, k := range keys {
		items = append(items, corev1.KeyToPath{Key: k, Path: k})
	}
	return items
}

func renderGatewayService(n names) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(n, n.gateway(), componentGateway),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: n.labels(componentGateway),
			Ports: []corev1.ServicePort{{
				Name:       gatewayPortName,
				Port:       GatewayPort,
				TargetPort: intstr.FromInt32(envoyconfig.ListenerPort),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

func renderGatewayPDB(n names) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: objectMeta(n, n.gateway(), componentGateway),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &one,
			Selector:       &metav1.LabelSelector{MatchLabels: n.labels(componentGateway)},
		},
	}
}

func renderGatewayServiceAccount(n names) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: objectMeta(n, n.gateway(), componentGateway),
	}
}
