package engine

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
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

// Routing is what the routing Service is rendered from.
type Routing struct {
	Engine    string
	Namespace string
	// Gen is the generation it selects.
	Gen int
	// Instance is spec.instanceRef. The Service is labelled with it, so
	// that the instance can list its engines' Services, whether or not
	// they run its authentication yet.
	Instance string
	// ObservedAuthHash is status.observedAuthHash, which the Service
	// publishes to the instance in an annotation when it is set.
	ObservedAuthHash string
	// GatewayRoute is how the engine asks the gateway to reach it
	// (contract.GatewayRoute.String); "" publishes none, which the
	// instance reads as the routing Service over plain HTTP.
	GatewayRoute string
}

// normalized is r without what cannot be put on the Service: an instance
// name that is not a label value (no instance has such a name) and a
// hash that is not one.
func (r Routing) normalized() Routing {
	if len(validation.IsValidLabelValue(r.Instance)) > 0 {
		r.Instance = ""
	}
	if !isHash(r.ObservedAuthHash) {
		r.ObservedAuthHash = ""
	}
	if _, ok := contract.ParseGatewayRoute(r.Engine, r.GatewayRoute); !ok {
		r.GatewayRoute = ""
	}
	return r
}

// RenderRoutingService builds the Service users and the gateway reach the
// engine by, selecting generation r.Gen. It is headless and publishes only
// ready addresses, so DNS names exactly the pods that serve. It is not part
// of any generation's rendering: only its selector, and what it publishes
// to the instance, ever change.
func RenderRoutingService(r Routing) map[string]any {
	return routingServiceMemo(r)
}

func renderRoutingService(r Routing) map[string]any {
	r = r.normalized()
	labels := map[string]string{LabelEngine: r.Engine, contract.LabelComponent: contract.ComponentEngineRouting}
	if r.Instance != "" {
		labels[contract.LabelInstanceRef] = r.Instance
	}
	var annotations map[string]string
	if r.ObservedAuthHash != "" {
		annotations = map[string]string{contract.AnnotationObservedAuthHash: r.ObservedAuthHash}
	}
	if r.GatewayRoute != "" {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[contract.AnnotationGatewayRoute] = r.GatewayRoute
	}
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        routingServiceName(r.Engine),
			Namespace:   r.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: corev1.ClusterIPNone,
			Selector:  generationLabels(r.Engine, r.Gen),
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

// keptRoutingService is the observed routing Service returned unchanged,
// its selector where it is, but for what it publishes to the instance (its
// instance and component labels and the auth hash), which are r's as on a
// rendered one: the instance must list every engine's Service.
func keptRoutingService(observed map[string]any, r Routing) map[string]any {
	r = r.normalized()
	o := composite.Unchanged(observed)
	md, _ := o["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		o["metadata"] = md
	}
	labels, _ := md["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		md["labels"] = labels
	}
	labels[contract.LabelComponent] = contract.ComponentEngineRouting
	delete(labels, contract.LabelInstanceRef)
	if r.Instance != "" {
		labels[contract.LabelInstanceRef] = r.Instance
	}
	annotations, _ := md["annotations"].(map[string]any)
	delete(annotations, contract.AnnotationObservedAuthHash)
	delete(annotations, contract.AnnotationGatewayRoute)
	set := func(k, v string) {
		if v == "" {
			return
		}
		if annotations == nil {
			annotations = map[string]any{}
			md["annotations"] = annotations
		}
		annotations[k] = v
	}
	set(contract.AnnotationObservedAuthHash, r.ObservedAuthHash)
	set(contract.AnnotationGatewayRoute, r.GatewayRoute)
	if annotations != nil && len(annotations) == 0 {
		delete(md, "annotations")
	}
	return o
}

// componentEngineNext is LabelComponent's value on an engine's next
// Service.
const componentEngineNext = "engine-next"

// renderNextService builds the Service the gateway reaches generation gen
// by while the engine switches protocol: headless, ready addresses only,
// as the routing Service.
func renderNextService(engine, namespace string, gen int) map[string]any {
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      contract.NextService(engine),
			Namespace: namespace,
			Labels:    map[string]string{LabelEngine: engine, contract.LabelComponent: componentEngineNext},
		},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: corev1.ClusterIPNone,
			Selector:  generationLabels(engine, gen),
			Ports:     servicePorts(),
		},
	}
	u := toUnstructured(svc)
	u["spec"].(map[string]any)["publishNotReadyAddresses"] = false
	return u
}
