package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FireboltEngineSpec is the desired state of a Firebolt engine: a
// StatefulSet of engine pods, replaced blue-green on every pod-affecting
// change.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.metadataEndpointOverride) || (has(self.metadataEndpointOverride) && self.metadataEndpointOverride == oldSelf.metadataEndpointOverride)",message="spec.metadataEndpointOverride is immutable once set"
type FireboltEngineSpec struct {
	// InstanceRef names the FireboltInstance in the same namespace that this
	// engine belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.instanceRef is immutable"
	InstanceRef string `json:"instanceRef"`

	// EngineClassRef names a FireboltEngineClass in the same namespace whose
	// template and defaults this engine inherits. At most 63 characters, as
	// Crossplane limits claim names: the engine's binding to the class
	// carries it as a label value.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +optional
	EngineClassRef *string `json:"engineClassRef,omitempty"`

	// Replicas is the number of engine pods; 0 stops the engine. At most
	// 1000 (MaxEngineReplicas): every node is listed in the engine's
	// ConfigMap.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`

	// Template is merged on top of the class template and the rendered pod;
	// the engine wins. Operator-owned paths are rejected.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`

	// UISidecar adds the engine-web UI sidecar on port 9100. Unset inherits
	// the class's value, else false.
	// +optional
	UISidecar *bool `json:"uiSidecar,omitempty"`

	// DrainCheckEnabled waits for the old generation to drain before
	// deleting it. Unset inherits the class's value, else true.
	// +optional
	DrainCheckEnabled *bool `json:"drainCheckEnabled,omitempty"`

	// DrainCheckInterval is the poll interval while draining, at least 1s:
	// every poll scrapes all of the old generation's pods. Unset inherits
	// the class's value, else 5s.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="must be a duration of at least 1s, such as 5s or 1m30s"
	// +optional
	DrainCheckInterval *metav1.Duration `json:"drainCheckInterval,omitempty"`

	// Rollout is how a change rolls out: graceful and recreate build a new
	// generation and switch to it; phased updates the serving generation
	// in place, one pod at a time, for a change of the pod template alone
	// (any other change, replicas among them, rolls gracefully). Unset
	// inherits the class's value, else graceful.
	// +optional
	Rollout RolloutStrategy `json:"rollout,omitempty"`

	// StandardRollingUpdate, under rollout: phased, hands an in-place
	// update to the StatefulSet controller, as seed 004's field of that
	// name: every pod is rolled at once in its order, without checks or
	// the drain gate. Read live, so setting it mid-update finishes that
	// update unchecked.
	// +optional
	StandardRollingUpdate bool `json:"standardRollingUpdate,omitempty"`

	// MetadataEndpointOverride replaces the instance's metadata endpoint in
	// the engine configuration, for engines in another cluster. Immutable
	// once set.
	// +optional
	MetadataEndpointOverride *string `json:"metadataEndpointOverride,omitempty"`

	// Storage is the per-pod data volume. With no backend set the class's
	// storage applies, else an emptyDir.
	// +kubebuilder:default={}
	// +optional
	Storage EngineStorageSpec `json:"storage,omitempty"`

	// CustomEngineConfig is deep-merged into the engine's config.yaml, over
	// the class's. Operator-owned paths are dropped.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	CustomEngineConfig *runtime.RawExtension `json:"customEngineConfig,omitempty"`

	// AutoStop scales the engine to idleReplicas when it has been idle for
	// idleTimeout and back to activeReplicas on demand or on a schedule;
	// falls back, whole, to the class's.
	// +optional
	AutoStop *AutoStopSpec `json:"autoStop,omitempty"`

	// Analysis checks a new generation before the routing Service switches
	// to it: once all its pods are ready, the rollout holds in creating
	// until successThreshold checks in a row succeed. ${GENERATION} in the
	// query's expression is replaced by the new generation's number, which
	// its pods carry in their firebolt.io/generation label. Not applied to
	// an engine's first generation, which replaces no serving one. Under
	// rollout: phased it is also the check of every in-place step.
	// +optional
	Analysis *RolloutCheck `json:"analysis,omitempty"`
}

// EnginePhase is where an engine is in its blue-green rollout.
// +kubebuilder:validation:Enum=stable;creating;switching;draining;cleaning;stopped;updating
type EnginePhase string

// Engine phases.
const (
	EnginePhaseStable    EnginePhase = "stable"
	EnginePhaseCreating  EnginePhase = "creating"
	EnginePhaseSwitching EnginePhase = "switching"
	EnginePhaseDraining  EnginePhase = "draining"
	EnginePhaseCleaning  EnginePhase = "cleaning"
	EnginePhaseStopped   EnginePhase = "stopped"
	// EnginePhaseUpdating: the active generation is updated in place, one
	// pod at a time (rollout: phased).
	EnginePhaseUpdating EnginePhase = "updating"
)

// FireboltEngineStatus is the observed state of an engine. Crossplane adds
// the conditions.
type FireboltEngineStatus struct {
	// ObservedGeneration is the claim's metadata.generation whose spec is
	// fully in effect: the engine is stable or stopped with that spec, the
	// old generation drained and deleted. Lower while a rollout is under
	// way, never higher. Crossplane copies it onto the claim, where kstatus
	// (Flux, kubectl wait) and Argo CD compare it with the claim's own
	// generation; the composite's generation plays no part. Always written,
	// so that 0 reads as "nothing in effect yet" rather than as absent.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration"`

	// CurrentGeneration is the latest blue-green generation allocated; the
	// first is 0. Numbers run up to 999 and then wrap to 0, skipping any
	// still in use. Not omitted when 0, because 0 is a real generation.
	// +optional
	CurrentGeneration int `json:"currentGeneration"`

	// ActiveGeneration is the generation serving traffic; -1 before the
	// first switch. Not omitted when 0, because 0 is a real generation.
	// +optional
	ActiveGeneration int `json:"activeGeneration"`

	// DrainingGeneration is the generation being drained; set only while
	// draining or cleaning.
	// +optional
	DrainingGeneration *int `json:"drainingGeneration,omitempty"`

	// Phase of the rollout; empty until the first reconcile.
	// +optional
	Phase EnginePhase `json:"phase,omitempty"`

	// LastReconciled is when the status was last written.
	// +optional
	LastReconciled *metav1.Time `json:"lastReconciled,omitempty"`

	// Renderings records, for every generation that still exists, its
	// objects exactly as they were rendered, so an older generation is
	// reproduced unchanged (never re-rendered from a newer spec or a newer
	// function) until it is deleted. Internal bookkeeping.
	// +optional
	// +listType=map
	// +listMapKey=generation
	// +kubebuilder:validation:MaxItems=3
	Renderings []GenerationRendering `json:"renderings,omitempty"`

	// AutoStop is auto-stop's last decision: the replica count the engine
	// runs at, and why. The decision lives here, never in spec.replicas, so
	// a GitOps tool never sees the product change the claim.
	// +optional
	AutoStop *AutoStopStatus `json:"autoStop,omitempty"`

	// Analysis is the analysis of the generation last analysed before its
	// switch (spec.analysis); unset without spec.analysis.
	// +optional
	Analysis *AnalysisStatus `json:"analysis,omitempty"`

	// PhasedRollout is the in-place update of the active generation under
	// rollout: phased, as a PhasedStatefulSet reports it; unset for an
	// engine that never had one.
	// +optional
	PhasedRollout *PhasedRolloutStatus `json:"phasedRollout,omitempty"`

	// ObservedAuthHash is the hash of the authentication configuration the
	// serving generation runs (its StatefulSet's firebolt.io/auth-hash),
	// written only while the engine is stable or stopped and kept during a
	// rollout; empty while it runs no authentication. The instance rotates
	// its signing keys only once every engine reports the hash of the keys
	// it gives them.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ObservedAuthHash string `json:"observedAuthHash,omitempty"`

	// ObservedEngineTLSHash is the serving generation's StatefulSet's
	// firebolt.io/engine-tls-hash, written as observedAuthHash is; empty
	// while it serves plain HTTP.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ObservedEngineTLSHash string `json:"observedEngineTLSHash,omitempty"`

	// ObservedEngineServingCertFP is the SHA-256 fingerprint (hex) of the
	// certificate cert-manager last issued to generation
	// observedEngineServingCertGen. A later issue for the same generation
	// (a renewal) rolls a new generation: engines read their certificate
	// when they start.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ObservedEngineServingCertFP string `json:"observedEngineServingCertFP,omitempty"`

	// ObservedEngineServingCertGen is the generation
	// observedEngineServingCertFP belongs to.
	// +optional
	ObservedEngineServingCertGen *int `json:"observedEngineServingCertGen,omitempty"`
}

// AutoStopStatus is auto-stop's decision.
type AutoStopStatus struct {
	// Replicas is the effective replica count: spec.replicas while
	// auto-stop is disabled, auto-stop's count while it is enabled.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Reason names the rule that decided: Disabled, WakeRequested,
	// ScheduleActive, Stopped, ScrapeFailed, ActivityObserved, Initializing
	// or Idle.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Reason string `json:"reason,omitempty"`

	// LastActivityTime is when queries were last seen running or
	// suspended, or a scrape failed (a failure never counts as idle), or
	// the idle clock was anchored. Unset while auto-stop is disabled.
	// +optional
	LastActivityTime *metav1.Time `json:"lastActivityTime,omitempty"`

	// LastScaledAt is when auto-stop last changed the replica count.
	// +optional
	LastScaledAt *metav1.Time `json:"lastScaledAt,omitempty"`
}

// GenerationRendering is one generation's rendered objects.
type GenerationRendering struct {
	// Generation is the blue-green generation number.
	Generation int `json:"generation"`

	// Hash identifies the rendering: the first 16 hex digits of the SHA-256
	// of its canonical JSON. A generation whose rendering hash differs from
	// what the current spec renders has drifted.
	// +kubebuilder:validation:MaxLength=64
	Hash string `json:"hash"`

	// AdoptedHash is set on a generation adopted from the original
	// operator (kubectl firebolt migrate): the hash the function rendered
	// for the spec at adoption. While the spec renders it, the adopted
	// generation is in effect; the next change rolls a new generation.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	AdoptedHash string `json:"adoptedHash,omitempty"`

	// Objects is the canonical JSON of the generation's objects, gzipped and
	// base64-encoded.
	// +kubebuilder:validation:MaxLength=262144
	Objects string `json:"objects"`
}

// XFireboltEngine is a Firebolt engine. Users apply its claim,
// FireboltEngine.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,path=xfireboltengines,singular=xfireboltengine,shortName=xfireng,categories=firebolt
// +kubebuilder:printcolumn:name="REPLICAS",type=integer,JSONPath=".spec.replicas"
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="GENERATION",type=integer,JSONPath=".status.activeGeneration"
type XFireboltEngine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FireboltEngineSpec   `json:"spec"`
	Status FireboltEngineStatus `json:"status,omitempty"`
}

// XFireboltEngineList is a list of XFireboltEngine.
// +kubebuilder:object:root=true
type XFireboltEngineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []XFireboltEngine `json:"items"`
}
