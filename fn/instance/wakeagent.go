package instance

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

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
)

// wakeEnabled says whether the instance's gateway runs the wake agent: only
// with the service account the instance composes, whose Role it grants. A
// user who names the gateway's service account owns its identity and its
// RBAC, so wake-on-zero is off, as in the original.
func wakeEnabled(t *corev1.PodTemplateSpec) bool { return userServiceAccount(t) == "" }

// wakeAgentSidecar is the agent's container. Its /hold listener is on
// loopback for the Lua filter only; metrics and /healthz listen on every
// address for the probes and Prometheus.
func wakeAgentSidecar(image string) corev1.Container {
	healthz := func(period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString(wakeAgentMetricsName)}},
			PeriodSeconds:    period,
			TimeoutSeconds:   2,
			FailureThreshold: failures,
		}
	}
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
		LivenessProbe:   healthz(15, 3),
		ReadinessProbe:  healthz(5, 2),
		SecurityContext: hardenedContainer(wakeAgentUID),
	}
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
