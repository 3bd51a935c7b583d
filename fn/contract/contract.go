// Package contract holds the names and numbers two composers must agree on:
// the instance's gateway routes to Services the engine composer creates,
// the engine composer mounts a Secret the instance composer creates, and
// both publish in-cluster DNS names. Nothing else links the two sides, so
// each of these is spelled here once.
package contract

import (
	"fmt"
	"strconv"
	"strings"
)

// ClusterDomain is the Kubernetes cluster DNS domain every in-cluster host
// name ends with, as the original operator's.
const ClusterDomain = "cluster.local"

// EngineQueryPort is the engine's http-query port: the engine image serves
// it, the routing Service exposes it and the gateway forwards to it.
const EngineQueryPort = 3473

// RoutingServiceSuffix ends the name of an engine's routing Service,
// <engine>-service, which the gateway addresses by engine name.
const RoutingServiceSuffix = "-service"

// RoutingService is the name of the engine's routing Service.
func RoutingService(engine string) string { return engine + RoutingServiceSuffix }

// postgresCredentialsSuffix ends the name of the internal PostgreSQL's
// generated credentials Secret, <instance>-metadata-postgres-creds.
const postgresCredentialsSuffix = "-metadata-postgres-creds"

// PostgresCredentials is the name of an instance's generated PostgreSQL
// credentials Secret.
func PostgresCredentials(instance string) string { return instance + postgresCredentialsSuffix }

// ServiceHost is the in-cluster DNS name of a Service (or, with a headless
// Service's name, of a pod: <pod>.<service>).
func ServiceHost(service, namespace string) string {
	return fmt.Sprintf("%s.%s.svc.%s", service, namespace, ClusterDomain)
}

// Labels more than one composer writes or selects on.
const (
	// LabelEngine names the FireboltEngine claim an object belongs to.
	LabelEngine = "firebolt.io/engine"
	// LabelEngineClass names the FireboltEngineClass claim whose spec a
	// ConfigMap publishes.
	LabelEngineClass = "firebolt.io/engine-class"
	// LabelEngineClassBinding names the FireboltEngineClass claim an
	// engine's binding ConfigMap binds it to: the class counts its engines
	// by it.
	LabelEngineClassBinding = "firebolt.io/engine-class-binding"
	// LabelInstanceRef names the FireboltInstance an engine's routing
	// Service belongs to, so the instance can list its engines' Services.
	LabelInstanceRef = "firebolt.io/instance"
	// LabelComponent says what a composed object is.
	LabelComponent = "firebolt.io/component"
)

// ConditionAuthReady is the instance's condition that says whether its
// engines may run its authentication: off, or its signing key issued and
// its settings valid. The instance reports it; engines wait while it is
// not True.
const ConditionAuthReady = "AuthReady"

// ComponentEngineRouting is LabelComponent's value on engines' routing
// Services.
const ComponentEngineRouting = "engine-routing"

// AnnotationObservedAuthHash on an engine's routing Service is the hash of
// the auth configuration the engine's serving generation runs
// (signing.EngineAuth.Hash), published only at rest (stable or stopped).
// The instance compares it with the hash of the key set it gives engines
// before a rotation takes a step; an engine without it runs none yet.
const AnnotationObservedAuthHash = "firebolt.io/observed-auth-hash"

// An engine class publishes its spec in a ConfigMap it composes in its
// namespace, and engines read the spec from there rather than from the
// class's claim: the claim's status changes on every bind (boundEngines),
// and every engine that required the claim would be called again each
// time. The ConfigMap changes only when the class's spec does.
const (
	// classSpecSuffix ends the ConfigMap's name, <class>-engineclass.
	// Claim names are at most 63 characters, so it always fits.
	classSpecSuffix = "-engineclass"
	// ClassSpecKey is the data key holding the class's spec as JSON,
	// verbatim: the fields of FireboltEngineClassSpec as the class's
	// composite holds them.
	ClassSpecKey = "spec"
	// ClassSpecErrorKey holds, instead, why the spec cannot be published
	// (it is longer than a ConfigMap holds); engines report it.
	ClassSpecErrorKey = "error"
)

// ClassSpecConfigMap is the name of the ConfigMap holding class's spec.
func ClassSpecConfigMap(class string) string { return class + classSpecSuffix }

// Usage API, as Crossplane v2 serves it: a class with engines bound to it
// composes a Usage of its own claim (deletion protection).
const (
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	UsageKind       = "Usage"
)

// AnnotationGatewayRoute on an engine's routing Service is how the engine
// asks the gateway to reach it (GatewayRoute.String): by its routing
// Service, or during a switch between plain HTTP and TLS by its next
// Service, in the protocol the pods there serve.
const AnnotationGatewayRoute = "firebolt.io/gateway-route"

// nextServiceSuffix ends the name of the Service that selects the
// generation an engine switches to while the gateway moves to its
// protocol.
const nextServiceSuffix = "-next"

// NextService is the name of an engine's next Service.
func NextService(engine string) string { return engine + nextServiceSuffix }

// GatewayRoute is how the gateway reaches one engine.
type GatewayRoute struct {
	// Service is RoutingService(engine) or NextService(engine).
	Service string
	// TLS: the pods the Service selects serve TLS.
	TLS bool
}

const (
	routeTLS   = "tls"
	routePlain = "plain"
)

// DefaultRoute is how the gateway reaches an engine that publishes no
// route: its routing Service, in the protocol given.
func DefaultRoute(engine string, tls bool) GatewayRoute {
	return GatewayRoute{Service: RoutingService(engine), TLS: tls}
}

// String is the annotation's value: "<service>;tls" or "<service>;plain".
func (r GatewayRoute) String() string {
	if r.TLS {
		return r.Service + ";" + routeTLS
	}
	return r.Service + ";" + routePlain
}

// ParseGatewayRoute reads the annotation an engine's routing Service
// carries. Anything but one of the engine's own two Services in a known
// protocol is refused: the Service is writable by others, and the gateway
// must never be pointed elsewhere by it.
func ParseGatewayRoute(engine, s string) (GatewayRoute, bool) {
	svc, proto, ok := strings.Cut(s, ";")
	if !ok || (svc != RoutingService(engine) && svc != NextService(engine)) {
		return GatewayRoute{}, false
	}
	switch proto {
	case routeTLS:
		return GatewayRoute{Service: svc, TLS: true}, true
	case routePlain:
		return GatewayRoute{Service: svc}, true
	}
	return GatewayRoute{}, false
}

// Migration from the original operator (kubectl firebolt migrate). The
// plugin writes these on the claims it makes from the original's custom
// resources; Crossplane copies them to the composite, where the function
// reads them.
const (
	// AnnotationMigratedFrom marks a claim made by a migration; its value
	// is MigratedFromOriginal.
	AnnotationMigratedFrom = "firebolt.io/migrated-from"
	// MigratedFromOriginal is AnnotationMigratedFrom's value for the
	// original Firebolt operator.
	MigratedFromOriginal = "firebolt-operator"
	// AnnotationAdoptGeneration on an engine claim is the generation the
	// original served: the function adopts that generation's live objects
	// as its rendering instead of rendering a first generation of its own.
	AnnotationAdoptGeneration = "firebolt.io/adopt-generation"
)

// AnnotationCompositionResourceName is Crossplane's annotation naming a
// composed resource within its composite.
const AnnotationCompositionResourceName = "crossplane.io/composition-resource-name"

// AdoptedNames are the composition resource names the function gives the
// original operator's objects a migrated claim takes over, keyed by
// "<resource>/<name>" (statefulsets/demo-metadata-pg). kubectl firebolt
// migrate stamps each on its object (AnnotationCompositionResourceName)
// when it releases it. Crossplane v2.4 records every desired object in the
// composite's resourceRefs before it applies any, and once a reference
// names an existing object without that annotation it cannot compose the
// composite again (errAnonymousCD, internal/controller/apiextensions/
// composite/composition_functions.go:907): a first apply that fails half
// way, as one that meets a transient error does, would leave the claim
// stuck. Stamped, the object is observed as the composed resource it is
// about to become.
type AdoptedNames map[string]string

// EngineAdoptedNames are those of engine's generation gen and its routing
// Service.
func EngineAdoptedNames(engine string, gen int) AdoptedNames {
	g := engine + "-g" + strconv.Itoa(gen)
	prefix := "g" + strconv.Itoa(gen) + "-"
	return AdoptedNames{
		"statefulsets/" + g:                  prefix + "statefulset",
		"services/" + g + "-hl":              prefix + "headless",
		"configmaps/" + g + "-config":        prefix + "config",
		"services/" + RoutingService(engine): "service",
	}
}

// InstanceAdoptedNames are those of instance's components with internal
// PostgreSQL.
func InstanceAdoptedNames(instance string) AdoptedNames {
	return AdoptedNames{
		"secrets/" + PostgresCredentials(instance):      "postgres-credentials",
		"statefulsets/" + instance + "-metadata-pg":     "postgres",
		"services/" + instance + "-metadata-pg":         "postgres-headless",
		"configmaps/" + instance + "-metadata-config":   "metadata-config",
		"deployments/" + instance + "-metadata":         "metadata",
		"services/" + instance + "-metadata":            "metadata-service",
		"configmaps/" + instance + "-gateway-config":    "gateway-config",
		"deployments/" + instance + "-gateway":          "gateway",
		"services/" + instance + "-gateway":             "gateway-service",
		"poddisruptionbudgets/" + instance + "-gateway": "gateway-pdb",
		"serviceaccounts/" + instance + "-gateway":      "gateway-serviceaccount",
	}
}
