// Package contract holds the names and numbers two composers must agree on:
// the instance's gateway routes to Services the engine composer creates,
// the engine composer mounts a Secret the instance composer creates, and
// both publish in-cluster DNS names. Nothing else links the two sides, so
// each of these is spelled here once.
package contract

import "fmt"

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
	// LabelEngineClass names the FireboltEngineClass claim a Usage protects.
	LabelEngineClass = "firebolt.io/engine-class"
)
