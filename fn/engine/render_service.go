package engine

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// Engine ports, fixed by the engine image.
const (
	PortQuery   = contract.EngineQueryPort
	PortHealth  = 8122
	PortMetrics = scrape.MetricsPort
)

// servicePorts are the ports both Services expose.
func servicePorts() []corev1.ServicePort {
	return []corev1.ServicePort{
		{Name: "http-query", Port: PortQuery, TargetPort: intstr.FromInt32(PortQuery), Protocol: corev1.ProtocolTCP},
		{Name: "health", Port: PortHealth, TargetPort: intstr.FromInt32(PortHealth), Protocol: corev1.ProtocolTCP},
		{Name: "metrics", Port: PortMetrics, TargetPort: intstr.FromInt32(PortMetrics), Protocol: corev1.ProtocolTCP},
	}
}

// renderHeadlessService builds the generation's headless Service. It
// publishes not-ready addresses so peers find each other while starting.
func renderHeadlessService(r renderInput) *corev1.Service {
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      headlessName(r.Engine, r.Gen),
			Namespace: r.Namespace,
			Labels:    generationLabels(r.Engine, r.Gen),
		},
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 generationLabels(r.Engine, r.Gen),
			Ports:                    servicePorts(),
		},
	}
}

// RenderRoutingService builds the Service users and the gateway reach the
// engine by, selecting generation gen. It is headless and publishes only
// ready addresses, so DNS names exactly the pods that serve. It is not part
// of any generation's rendering: only its selector ever changes.
func RenderRoutingService(engine, namespace string, gen int) map[string]any {
	return routingServiceMemo(engine, namespace, gen)
}

func renderRoutingService(engine, namespace string, gen int) map[string]any {
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      routingServiceName(engine),
			Namespace: namespace,
			Labels:    map[string]string{LabelEngine: engine},
		},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: corev1.ClusterIPNone,
			Selector:  generationLabels(engine, gen),
			Ports:     servicePorts(),
		},
	}
	u := toUnstructured(svc)
	// false is omitted by encoding/json; the field is stated so this
	// function owns it and an out-of-band true is reverted.
	spec := u["spec"].(map[string]any)
	spec["publishNotReadyAddresses"] = false
	return u
}
