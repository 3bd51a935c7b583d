package instance

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance/envoyconfig"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// The wake agent sidecar of the gateway pod: the function's own image, run
// as `function wake-agent`, as the image's non-root user.
const (
	wakeAgentContainer   = "wake-agent"
	wakeAgentUID         = int64(65532)
	wakeAgentMetricsName = "wake-metrics"

	// envEnvoyMemoryLimit gives the agent Envoy's memory limit, from which
	// it derives how many requests it may hold (each may buffer a body).
	envEnvoyMemoryLimit = "ENVOY_MEMORY_LIMIT_BYTES"
	envPodNamespace     = "POD_NAMESPACE"

	// serviceAccountMount is where client-go's in-cluster config reads
	// the token, the CA and the namespace.
	serviceAccountMount = "/var/run/secrets/kubernetes.io/serviceaccount"
	// wakeAgentTokenSeconds is the projected token's lifetime, the
	// original's (the kubelet renews it at 80%).
	wakeAgentTokenSeconds = int64(3600)
	// wakeAgentStopSeconds is the original's preStop pause: longer than
	// Envoy's drain, shorter than the grace period.
	wakeAgentStopSeconds = int64(12)
)

// wakeEnabled says whether the instance's gateway runs the wake agent: only
// with the service account the instance composes, whose Role it grants. A
// user who names the gateway's service account owns its identity and its
// RBAC, so wake-on-zero is off, as in the original.
func wakeEnabled(t *corev1.PodTemplateSpec) bool { return userServiceAccount(t) == "" }

// wakeAgentSidecar is the agent's container. Its /hold listener is on
// loopback for the Lua filter only; metrics and /healthz listen on every
// address for Prometheus.
//
// It has no probes, as the original's: Envoy fails open when the agent does
// not answer, so a wedged agent costs wake-on-zero only, while a readiness
// probe would take the whole gateway pod out of its Service and a liveness
// probe would restart it and drop every request it holds. Its preStop
// pause outlives Envoy's drain (gatewayDrainSeconds), so requests it holds
// are answered before the pod goes.
func wakeAgentSidecar(image string) corev1.Container {
	return corev1.Container{
		Name:  wakeAgentContainer,
		Image: image,
		Args: []string{
			"wake-agent",
			"--address=127.0.0.1:" + strconv.Itoa(int(envoyconfig.WakeAgentHoldPort)),
			"--metrics-address=:" + strconv.Itoa(int(envoyconfig.WakeAgentMetricsPort)),
		},
		Env: []corev1.EnvVar{{Name: envPodNamespace, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
		}}},
		Ports: []corev1.ContainerPort{
			{Name: wakeAgentMetricsName, ContainerPort: envoyconfig.WakeAgentMetricsPort, Protocol: corev1.ProtocolTCP},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
			Sleep: &corev1.SleepAction{Seconds: wakeAgentStopSeconds},
		}},
		SecurityContext: hardenedContainer(wakeAgentUID),
		VolumeMounts: []corev1.VolumeMount{
			{Name: podtemplate.VolumeWakeAgentToken, MountPath: serviceAccountMount, ReadOnly: true},
		},
	}
}

// wakeAgentTokenVolume is the gateway's API credential, projected for the
// wake agent's container alone: the pod mounts no token of its own
// (automountServiceAccountToken false), so Envoy, which faces the network,
// holds none. The three sources are what automount would have put at
// serviceAccountMount, so the agent's in-cluster config reads it
// unchanged; the token is short-lived and the kubelet renews it.
func wakeAgentTokenVolume() corev1.Volume {
	return corev1.Volume{Name: podtemplate.VolumeWakeAgentToken, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(wakeAgentTokenSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}}}
}

// withEnvoyMemoryLimit passes Envoy's memory limit to the agent when the
// merged template sets one (the downward API cannot name a limit that is
// not there).
func withEnvoyMemoryLimit(tpl *corev1.PodTemplateSpec) {
	var limited bool
	for _, c := range tpl.Spec.Containers {
		if c.Name == podtemplate.GatewayContainer {
			_, limited = c.Resources.Limits[corev1.ResourceMemory]
		}
	}
	if !limited {
		return
	}
	for i := range tpl.Spec.Containers {
		if c := &tpl.Spec.Containers[i]; c.Name == wakeAgentContainer {
			c.Env = append(c.Env, corev1.EnvVar{Name: envEnvoyMemoryLimit, ValueFrom: &corev1.EnvVarSource{
				ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: podtemplate.GatewayContainer, Resource: "limits.memory", Divisor: resource.MustParse("1")},
			}})
		}
	}
}

// renderGatewayRole grants the gateway's own identity what its wake agent
// needs in the instance's namespace, as the original: read and patch the
// FireboltEngine claims (the agent stamps firebolt.io/wake-requested on
// them) and watch EndpointSlices (to know when an engine is ready).
func renderGatewayRole(n names) *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: objectMeta(n, n.gateway(), componentGateway),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1alpha1.Group}, Resources: []string{"fireboltengines"}, Verbs: []string{"get", "list", "patch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
}

func renderGatewayRoleBinding(n names) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: objectMeta(n, n.gateway(), componentGateway),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: n.gateway()},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: n.gateway(), Namespace: n.namespace}},
	}
}

// TypeWakeOnZero reports that wake-on-zero is off for this instance.
const TypeWakeOnZero = "WakeOnZero"

// Reasons of the WakeOnZero condition.
const (
	ReasonWakeOnZeroDisabled = "WakeOnZeroDisabled"
	ReasonWakeOnZeroEnabled  = "WakeOnZeroEnabled"
)

// wakeOnZero is the WakeOnZero condition, or nil when there is nothing to
// say: a Warning while a user-named gateway service account turns the wake
// agent off, and, once said, True again when it is back on (Crossplane keeps
// a condition a function stops sending).
func wakeOnZero(t *corev1.PodTemplateSpec, prev map[string]Condition) *Condition {
	if sa := userServiceAccount(t); sa != "" {
		return &Condition{Type: TypeWakeOnZero, Status: metav1.ConditionFalse, Reason: ReasonWakeOnZeroDisabled,
			Message: "spec.gateway.template.spec.serviceAccountName names " + strconv.Quote(sa) +
				": the gateway runs no wake agent, so a query for an auto-stopped engine is not held and does not wake it"}
	}
	if _, seen := prev[TypeWakeOnZero]; seen {
		return &Condition{Type: TypeWakeOnZero, Status: metav1.ConditionTrue, Reason: ReasonWakeOnZeroEnabled,
			Message: "the gateway runs the wake agent"}
	}
	return nil
}
