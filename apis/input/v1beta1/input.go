// Package v1beta1 holds the input of function-firebolt: what the original
// operator took as command-line flags (default images, resource bounds,
// scrape settings). Crossplane never installs its CRD and never defaults or
// validates it, so Resolve does both.
//
// +kubebuilder:object:generate=true
// +groupName=firebolt.fn.crossplane.io
// +versionName=v1beta1
package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemeGroupVersion is the group version of the input.
var SchemeGroupVersion = schema.GroupVersion{Group: "firebolt.fn.crossplane.io", Version: "v1beta1"}

// Input configures function-firebolt. Every field is optional; Resolve
// fills in the documented defaults. The CRD is only a schema: Crossplane
// passes the object to the function as it appears in the Composition.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the settings.
	// +optional
	Spec InputSpec `json:"spec,omitempty"`
}

// InputSpec holds the function's settings.
type InputSpec struct {
	// Images are the default images of the rendered containers; a pod
	// template's image wins over them.
	// +optional
	Images Images `json:"images,omitempty"`

	// EngineResourceBounds caps the engine container's resource requests and
	// limits. Unset or zero means unbounded.
	// +optional
	EngineResourceBounds ResourceBounds `json:"engineResourceBounds,omitempty"`

	// MetricScrapeMode is how engine /metrics endpoints are reached when the
	// FireboltInstance does not say: ApiserverProxy (through the API
	// server's pods/proxy, default) or PodIP (directly).
	// +kubebuilder:validation:Enum=ApiserverProxy;PodIP
	// +optional
	MetricScrapeMode string `json:"metricScrapeMode,omitempty"`

	// Scrape bounds the engine /metrics scrapes made while draining.
	// +optional
	Scrape Scrape `json:"scrape,omitempty"`

	// StableTTL is the response TTL while a composite is stable: Crossplane
	// calls the function again after it, so it bounds how long a watch event
	// Crossplane dropped goes unnoticed (composed and required objects are
	// watched, so drift is noticed at once). Each timed call costs the API
	// server a request per composed object. Default 30m.
	// +optional
	StableTTL *metav1.Duration `json:"stableTTL,omitempty"`

	// PodSecurity relaxes the pod-template policy for this Composition. By
	// default claim templates may add no capability but NET_BIND_SERVICE,
	// mount no hostPath, use any ServiceAccount of their namespace and not
	// run as root. Only the platform operator, who owns the Composition,
	// can widen this; a claim cannot.
	// +optional
	PodSecurity PodSecurity `json:"podSecurity,omitempty"`

	// KubernetesProviderConfig names the provider-kubernetes ProviderConfig
	// of the Objects a PhasedRollout composes to set its target's
	// partition. Default "default".
	// +kubebuilder:validation:MaxLength=253
	// +optional
	KubernetesProviderConfig string `json:"kubernetesProviderConfig,omitempty"`
}

// PodSecurity is the platform operator's allow-list for what a claim's pod
// templates (and spec.storage.hostPath) may ask for beyond the Kubernetes
// Pod Security Standards "restricted" profile. What no allow-list may
// permit (privileged containers, host namespaces, hostPorts, ...) is
// refused by the API server before the function sees it.
type PodSecurity struct {
	// AllowedHostPaths are node directories a hostPath volume or
	// spec.storage.hostPath may use: a path is allowed when it is one of
	// them or lies below one (whole path segments: /mnt/data allows
	// /mnt/data/x, not /mnt/database). Absolute, clean paths. Empty: no
	// hostPath at all.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AllowedHostPaths []string `json:"allowedHostPaths,omitempty"`

	// AllowedCapabilities are Linux capabilities a container may add on
	// top of NET_BIND_SERVICE (always allowed), written as Kubernetes
	// writes them (SYS_PTRACE, not CAP_SYS_PTRACE). ALL allows any.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AllowedCapabilities []string `json:"allowedCapabilities,omitempty"`

	// AllowedServiceAccountNames narrows the ServiceAccounts a template may
	// name in serviceAccountName, and whose token an engine template may
	// mount. Empty: any ServiceAccount of the claim's namespace.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	AllowedServiceAccountNames []string `json:"allowedServiceAccountNames,omitempty"`

	// AllowRunAsRoot lets a template set runAsUser 0 or runAsNonRoot false.
	// +optional
	AllowRunAsRoot bool `json:"allowRunAsRoot,omitempty"`
}

// Images are default container images. The defaults are pinned; see
// FireboltRelease.
type Images struct {
	// Engine image. Default
	// oci.firebolt.io/firebolt-db/engine:release-5.0.0-pre.0.20260815074041.524de236b514.
	// +optional
	Engine string `json:"engine,omitempty"`

	// EngineUI is the engine web UI sidecar's image. No default: an engine
	// that asks for the opt-in sidecar (uiSidecar) is held with a condition
	// until it is set.
	// +optional
	EngineUI string `json:"engineUI,omitempty"`

	// Metadata service image. Default
	// ghcr.io/firebolt-db/metadata:release-5.0.0-pre.0.20260815074041.524de236b514,
	// the engine's release.
	// +optional
	Metadata string `json:"metadata,omitempty"`

	// Gateway (Envoy) image. Default envoyproxy/envoy:v1.37.2.
	// +optional
	Gateway string `json:"gateway,omitempty"`

	// Postgres is the internal PostgreSQL's image. Default postgres:16-alpine
	// (its postgres user is UID/GID 70, which the StatefulSet runs as). A
	// data directory is bound to its PostgreSQL major version.
	// +optional
	Postgres string `json:"postgres,omitempty"`

	// WakeAgent is the image of the gateway's wake agent sidecar: the
	// function's own image, which runs the agent as `function wake-agent`.
	// Default ghcr.io/firebolt-db/function-firebolt at this function's
	// version; set it when the Function package is published elsewhere.
	// +optional
	WakeAgent string `json:"wakeAgent,omitempty"`
}

// ResourceBounds are maxima for the engine container's resources; zero or
// unset means unbounded.
type ResourceBounds struct {
	// MaxCPU bounds cpu requests and limits.
	// +optional
	MaxCPU *resource.Quantity `json:"maxCPU,omitempty"`

	// MaxMemory bounds memory requests and limits.
	// +optional
	MaxMemory *resource.Quantity `json:"maxMemory,omitempty"`

	// MaxEphemeralStorage bounds ephemeral-storage requests and limits.
	// +optional
	MaxEphemeralStorage *resource.Quantity `json:"maxEphemeralStorage,omitempty"`
}

// Scrape bounds engine /metrics scrapes.
type Scrape struct {
	// PodTimeout bounds one pod's scrape. Default 2s; at most
	// overallTimeout.
	// +optional
	PodTimeout *metav1.Duration `json:"podTimeout,omitempty"`

	// OverallTimeout bounds all scrapes of one function call. Default 10s.
	// +optional
	OverallTimeout *metav1.Duration `json:"overallTimeout,omitempty"`

	// MaxBodyBytes caps the bytes read from one /metrics response. Default
	// 1048576.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxBodyBytes *int64 `json:"maxBodyBytes,omitempty"`

	// Concurrency is how many pods one drain check scrapes at once.
	// Default 16.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Concurrency *int32 `json:"concurrency,omitempty"`

	// MaxConcurrentScrapes bounds the scrapes in flight in the whole
	// function process, across every engine of every namespace it serves,
	// so many engines draining at once cannot open engines × concurrency
	// connections; a check waits for a free slot within its
	// overallTimeout. It also bounds the memory held by metrics bodies to
	// maxConcurrentScrapes × maxBodyBytes. Compositions that set different
	// values share one count, each scrape starting only while fewer than
	// its own value are in flight. Default 64.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxConcurrentScrapes *int32 `json:"maxConcurrentScrapes,omitempty"`
}
