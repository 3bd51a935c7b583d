package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetricScrapeMode is how engine /metrics endpoints are reached.
// +kubebuilder:validation:Enum=PodIP;ApiserverProxy
type MetricScrapeMode string

// Metric scrape modes.
const (
	// MetricScrapeModePodIP scrapes the pod IP directly.
	MetricScrapeModePodIP MetricScrapeMode = "PodIP"
	// MetricScrapeModeApiserverProxy scrapes through the API server's
	// pods/proxy subresource.
	MetricScrapeModeApiserverProxy MetricScrapeMode = "ApiserverProxy"
)

// FireboltInstanceSpec is the desired state of a Firebolt instance: its
// metadata service, the PostgreSQL behind it and the gateway in front of its
// engines.
type FireboltInstanceSpec struct {
	// ID is the metadata account ID. When empty, the function derives one
	// and reports it in status.id. Once an id is in use (status.id), a
	// different spec.id is not applied: the instance keeps its account and
	// says so in the MetadataReady condition. Set it to status.id to pin
	// the account in Git.
	// +optional
	ID string `json:"id,omitempty"`

	// MetadataNG renders the experimental metadata-ng configuration.
	// +kubebuilder:default=false
	// +optional
	MetadataNG bool `json:"metadataNG,omitempty"`

	// Metadata configures the metadata service; may be {}.
	Metadata MetadataSpec `json:"metadata"`

	// Gateway configures the Envoy gateway; may be {}.
	Gateway GatewaySpec `json:"gateway"`

	// Auth is engine authentication for the whole instance: the admin
	// login, signing keys from cert-manager and OIDC providers.
	// +optional
	Auth *AuthSpec `json:"auth,omitempty"`

	// TLS of the gateway's client listener and of the engines' query
	// listener (the gateway's connections to engines).
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// MetricScrapeMode is how engine /metrics endpoints are scraped. Unset
	// uses the function's configured default.
	// +optional
	MetricScrapeMode MetricScrapeMode `json:"metricScrapeMode,omitempty"`
}

// MetadataSpec configures the metadata service.
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas == 1",message="spec.metadata.replicas must be 1"
type MetadataSpec struct {
	// Replicas of the metadata service; only 1 is allowed.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Template for the metadata pod; primary container "metadata", on which
	// only image, imagePullPolicy and resources may be set.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`

	// Postgres points at an external PostgreSQL; unset deploys an internal
	// one.
	// +optional
	Postgres *PostgresSpec `json:"postgres,omitempty"`

	// EngineRegistration would register engines in the metadata service. It
	// is accepted and stored but has no effect yet (the original operator
	// declares it and never acts on it either); when true, the
	// EngineRegistration condition says so.
	// +kubebuilder:default=false
	// +optional
	EngineRegistration bool `json:"engineRegistration,omitempty"`
}

// PostgresSpec points at an external PostgreSQL.
type PostgresSpec struct {
	// Host name or address of the server.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9.\-:\[\]]+$`
	Host string `json:"host"`

	// Port of the server.
	// +kubebuilder:default=5432
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Database name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.\-]+$`
	Database string `json:"database"`

	// Schema within the database.
	// +kubebuilder:default=public
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.\-]+$`
	// +optional
	Schema string `json:"schema,omitempty"`

	// CredentialsSecretRef names a Secret in the instance's namespace with
	// keys username and password.
	CredentialsSecretRef SecretReference `json:"credentialsSecretRef"`
}

// SecretReference names a Secret in the same namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// GatewaySpec configures the Envoy gateway.
type GatewaySpec struct {
	// Replicas of the gateway; unset means 2.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// MetricsPort is the Envoy stats listener port.
	// +kubebuilder:default=9090
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	MetricsPort int32 `json:"metricsPort,omitempty"`

	// Template for the gateway pods; primary container "envoy", on which
	// only image, imagePullPolicy and resources may be set.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// TLSSpec configures TLS on the engine listeners and the gateway.
type TLSSpec struct {
	// Gateway is the gateway's client-facing listener: TLS from a
	// cert-manager Certificate or a Secret of yours, client certificates
	// verified against clientCASecretRef (mutual TLS) and checked against
	// crlSecretRef.
	// +kubebuilder:validation:XValidation:rule="has(self.enabled) && self.enabled || (!has(self.clientCASecretRef) && !has(self.crlSecretRef))",message="spec.tls.gateway: clientCASecretRef and crlSecretRef must be unset while enabled is false"
	// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || has(self.certManager) != has(self.secretRef)",message="spec.tls.gateway: exactly one of certManager and secretRef is required when enabled is true"
	// +kubebuilder:validation:XValidation:rule="!has(self.crlSecretRef) || has(self.clientCASecretRef)",message="spec.tls.gateway.crlSecretRef: a CRL needs clientCASecretRef: it revokes client certificates, which are only asked for with mutual TLS"
	// +optional
	Gateway *TLSListenerSpec `json:"gateway,omitempty"`

	// Engine is the engines' query listener: each engine generation
	// serves it with its own certificate from certManager, and the
	// gateway verifies engines against the CAs of their live generations,
	// checked against crlSecretRef when it is set.
	// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || has(self.certManager)",message="spec.tls.engine.certManager: required when enabled is true: each engine generation gets its certificate from it"
	// +kubebuilder:validation:XValidation:rule="has(self.enabled) && self.enabled || !has(self.crlSecretRef)",message="spec.tls.engine.crlSecretRef: must be unset while enabled is false"
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.enabled) || !oldSelf.enabled || !has(oldSelf.certManager) || !has(self.enabled) || !self.enabled || !has(self.certManager) || (self.certManager.issuerRef.name == oldSelf.certManager.issuerRef.name && (has(self.certManager.issuerRef.kind) ? self.certManager.issuerRef.kind : 'ClusterIssuer') == (has(oldSelf.certManager.issuerRef.kind) ? oldSelf.certManager.issuerRef.kind : 'ClusterIssuer'))",message="spec.tls.engine.certManager.issuerRef: cannot change while engine TLS stays enabled: generations serving certificates of the old issuer would lose the gateway's trust; disable engine TLS, or keep the issuer"
	// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) && !has(self.clientCASecretRef) && !has(self.dnsNames)",message="spec.tls.engine: secretRef, clientCASecretRef and dnsNames are gateway settings; engines get a certificate per generation from certManager"
	// +optional
	Engine *TLSListenerSpec `json:"engine,omitempty"`
}

// TLSListenerSpec configures one TLS listener.
type TLSListenerSpec struct {
	// Enabled turns TLS on for the listener.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// CertManager issues the listener's certificate.
	// +optional
	CertManager *CertManagerSpec `json:"certManager,omitempty"`

	// SecretRef names a Secret of yours with tls.crt and tls.key to serve
	// (gateway only). It is mounted, never read by the function.
	// +kubebuilder:validation:XValidation:rule="!self.name.matches('-auth-signing(-.*)?$') && !self.name.matches('-g[0-9]+-engine-tls$')",message="secretRef.name must not name a Secret this product mints (<instance>-auth-signing…, <engine>-g<N>-engine-tls)"
	// +optional
	SecretRef *SecretReference `json:"secretRef,omitempty"`

	// ClientCASecretRef names a Secret with ca.crt: the gateway then
	// requires client certificates signed by it (mutual TLS).
	// +kubebuilder:validation:XValidation:rule="!self.name.matches('-auth-signing(-.*)?$') && !self.name.matches('-g[0-9]+-engine-tls$')",message="clientCASecretRef.name must not name a Secret this product mints (<instance>-auth-signing…, <engine>-g<N>-engine-tls)"
	// +optional
	ClientCASecretRef *SecretReference `json:"clientCASecretRef,omitempty"`

	// CRLSecretRef names a Secret with crl.pem (PEM or DER): client
	// certificates it revokes are refused.
	// +kubebuilder:validation:XValidation:rule="!self.name.matches('-auth-signing(-.*)?$') && !self.name.matches('-g[0-9]+-engine-tls$')",message="crlSecretRef.name must not name a Secret this product mints (<instance>-auth-signing…, <engine>-g<N>-engine-tls)"
	// +optional
	CRLSecretRef *SecretReference `json:"crlSecretRef,omitempty"`

	// DNSNames are extra names for the gateway's certificate, besides its
	// Service's names.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	DNSNames []string `json:"dnsNames,omitempty"`
}

// InstancePhase summarises an instance's state.
// +kubebuilder:validation:Enum=Provisioning;Ready;Degraded;Failed
type InstancePhase string

// Instance phases.
const (
	InstancePhaseProvisioning InstancePhase = "Provisioning"
	InstancePhaseReady        InstancePhase = "Ready"
	InstancePhaseDegraded     InstancePhase = "Degraded"
	InstancePhaseFailed       InstancePhase = "Failed"
)

// FireboltInstanceStatus is the observed state of an instance. Crossplane
// adds the conditions.
type FireboltInstanceStatus struct {
	// ObservedGeneration is the claim's metadata.generation whose spec is
	// fully in effect: every object composed from it and every workload
	// rolled out and ready. Lower while it is not, never higher. Crossplane
	// copies it onto the claim, where kstatus and Argo CD compare it with the
	// claim's own generation. Always written.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration"`

	// ComposedGeneration is the claim's metadata.generation whose spec the
	// composed objects were last rendered from in full: recorded in the
	// response that applies them, so a later call knows the observed
	// objects are that spec's. Internal bookkeeping.
	// +optional
	ComposedGeneration int64 `json:"composedGeneration,omitempty"`

	// Phase summarises the instance's state.
	// +optional
	Phase InstancePhase `json:"phase,omitempty"`

	// ID is the metadata account ID in use: spec.id or, when spec.id was
	// empty, a derived one. It never changes once published.
	// +optional
	ID string `json:"id,omitempty"`

	// MetadataReady is true when the metadata service is available. Not
	// omitted when false, so that the METADATA column reads false.
	// +optional
	MetadataReady bool `json:"metadataReady"`

	// MetadataEndpoint is host:port of the metadata service; empty while it
	// is not ready.
	// +optional
	MetadataEndpoint string `json:"metadataEndpoint,omitempty"`

	// GatewayReady is true when the gateway is available. Not omitted when
	// false, so that the GATEWAY column reads false.
	// +optional
	GatewayReady bool `json:"gatewayReady"`

	// GatewayEndpoint is the gateway's service host; empty while it is not
	// ready.
	// +optional
	GatewayEndpoint string `json:"gatewayEndpoint,omitempty"`

	// Auth is the state of the signing keys; unset while auth was never
	// enabled.
	// +optional
	Auth *AuthStatus `json:"auth,omitempty"`

	// GatewayTLS is the TLS posture the gateway's client listener is
	// recorded to serve; unset while it serves plain HTTP or while a
	// tightening stages fail-closed.
	// +optional
	GatewayTLS *GatewayTLSStatus `json:"gatewayTLS,omitempty"`

	// EngineTLS is engine TLS as the instance runs it: set once the
	// anchor certificate is issued while spec.tls.engine is enabled, and
	// kept while an engine still serves TLS; unset otherwise.
	// +optional
	EngineTLS *EngineTLSStatus `json:"engineTLS,omitempty"`

	// RolledEngineTrustCAs are the SHA-256 fingerprints (hex) of the engine
	// CA certificates every gateway pod is confirmed to trust. An engine
	// switches to a generation only once its CA is listed here.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	RolledEngineTrustCAs []string `json:"rolledEngineTrustCAs,omitempty"`

	// RolledEngineUpstream is how every gateway pod is confirmed to reach
	// engines: the default protocol and the engines reached otherwise
	// (during an engine's switch between plain and TLS).
	// +optional
	RolledEngineUpstream *EngineUpstreamStatus `json:"rolledEngineUpstream,omitempty"`

	// LastReconciled is when the status last changed (and, while
	// Crossplane's circuit breaker for the instance is open, when it was
	// last stamped to close it).
	// +optional
	LastReconciled *metav1.Time `json:"lastReconciled,omitempty"`

	// Adopted holds the components adopted from the original operator
	// (kubectl firebolt migrate) as they ran: the PostgreSQL StatefulSet,
	// the metadata and gateway Deployments and their ConfigMaps are
	// applied as recorded here instead of rendered, so that no pod
	// restarts, until the spec changes.
	// +optional
	Adopted *AdoptedComponents `json:"adopted,omitempty"`
}

// GatewayTLSMode is the gateway listener's TLS posture.
// +kubebuilder:validation:Enum=TLS;MutualTLS
type GatewayTLSMode string

// Gateway TLS modes.
const (
	GatewayTLSModeTLS       GatewayTLSMode = "TLS"
	GatewayTLSModeMutualTLS GatewayTLSMode = "MutualTLS"
)

// GatewayTLSStatus is the TLS the gateway's client listener serves.
type GatewayTLSStatus struct {
	// SecretName is the Secret the listener's certificate is mounted from.
	SecretName string `json:"secretName"`

	// CreatedAt is when this posture was first recorded.
	// +optional
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`

	// Mode is TLS or MutualTLS.
	// +optional
	Mode GatewayTLSMode `json:"mode,omitempty"`

	// ClientCASecretName is the Secret client certificates are verified
	// against, with MutualTLS.
	// +optional
	ClientCASecretName string `json:"clientCASecretName,omitempty"`

	// CRLSecretName is the Secret of the certificate revocation list
	// checked, if any.
	// +optional
	CRLSecretName string `json:"crlSecretName,omitempty"`
}

// EngineTLSStatus is the instance's engine TLS.
type EngineTLSStatus struct {
	// SecretName is the anchor certificate's Secret: its issue shows the
	// issuer signs engine certificates, before any engine rolls.
	SecretName string `json:"secretName"`

	// CreatedAt is when engine TLS was first recorded.
	// +optional
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`

	// Reencrypting is true while the gateway reaches engines over TLS by
	// default.
	// +optional
	Reencrypting bool `json:"reencrypting,omitempty"`

	// IssuerRef is the issuer the anchor was issued by when reencrypting
	// started: engines are told to serve TLS only under an issuer proven
	// to sign with a CA.
	// +optional
	IssuerRef *IssuerRef `json:"issuerRef,omitempty"`
}

// EngineUpstreamStatus is how the gateway reaches engines.
type EngineUpstreamStatus struct {
	// TLS: engines without a route of their own are reached over TLS.
	// +optional
	TLS bool `json:"tls,omitempty"`

	// Routes are the engines reached by another Service or protocol than
	// by default, sorted by engine.
	// +kubebuilder:validation:MaxItems=512
	// +listType=map
	// +listMapKey=engine
	// +optional
	Routes []EngineRoute `json:"routes,omitempty"`
}

// EngineRoute is one engine the gateway reaches otherwise than by default.
type EngineRoute struct {
	// Engine is the engine's name.
	// +kubebuilder:validation:MaxLength=63
	Engine string `json:"engine"`

	// Service is the Service the gateway resolves for it.
	// +kubebuilder:validation:MaxLength=63
	Service string `json:"service"`

	// TLS: the engine is reached over TLS.
	// +optional
	TLS bool `json:"tls,omitempty"`
}

// XFireboltInstance is a Firebolt instance. Users apply its claim,
// FireboltInstance.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,path=xfireboltinstances,singular=xfireboltinstance,shortName=xfire,categories=firebolt
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="GATEWAY",type=boolean,JSONPath=".status.gatewayReady"
// +kubebuilder:printcolumn:name="METADATA",type=boolean,JSONPath=".status.metadataReady"
type XFireboltInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FireboltInstanceSpec   `json:"spec"`
	Status FireboltInstanceStatus `json:"status,omitempty"`
}

// XFireboltInstanceList is a list of XFireboltInstance.
// +kubebuilder:object:root=true
type XFireboltInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []XFireboltInstance `json:"items"`
}

// AdoptedComponents are an instance's components adopted from the
// original operator.
type AdoptedComponents struct {
	// SpecHash identifies the spec they were adopted under: once the spec
	// is another, the components are rendered from it.
	// +kubebuilder:validation:MaxLength=64
	SpecHash string `json:"specHash"`

	// Objects is the canonical JSON of the adopted objects by composition
	// resource name, gzipped and base64-encoded.
	// +kubebuilder:validation:MaxLength=262144
	Objects string `json:"objects"`
}
