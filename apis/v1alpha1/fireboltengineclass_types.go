package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FireboltEngineClassSpec holds a pod template and defaults shared by the
// engines that name the class. Every field but the template is a default:
// an engine's own value wins, then the class's, then the built-in default.
type FireboltEngineClassSpec struct {
	// Template is merged beneath the engine's template. Operator-owned paths
	// are rejected.
	Template corev1.PodTemplateSpec `json:"template"`

	// UISidecar is the default for the engines' uiSidecar.
	// +optional
	UISidecar *bool `json:"uiSidecar,omitempty"`

	// Storage applies to engines that name no storage backend themselves.
	// +kubebuilder:default={}
	// +optional
	Storage EngineStorageSpec `json:"storage,omitempty"`

	// CustomEngineConfig is deep-merged beneath the engine's own
	// customEngineConfig. Operator-owned paths are dropped.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	CustomEngineConfig *runtime.RawExtension `json:"customEngineConfig,omitempty"`

	// Rollout is the default for the engines' rollout; read live, so a
	// change does not roll pods.
	// +optional
	Rollout RolloutStrategy `json:"rollout,omitempty"`

	// DrainCheckEnabled is the default for the engines' drainCheckEnabled.
	// +optional
	DrainCheckEnabled *bool `json:"drainCheckEnabled,omitempty"`

	// DrainCheckInterval is the default for the engines'
	// drainCheckInterval, at least 1s.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="must be a duration of at least 1s, such as 5s or 1m30s"
	// +optional
	DrainCheckInterval *metav1.Duration `json:"drainCheckInterval,omitempty"`

	// AutoStop is the engines' auto-stop when an engine has none of its
	// own (whole-struct fallback).
	// +optional
	AutoStop *AutoStopSpec `json:"autoStop,omitempty"`
}

// FireboltEngineClassStatus is the observed state of a class. Crossplane
// adds the conditions.
type FireboltEngineClassStatus struct {
	// ObservedGeneration is the claim's metadata.generation whose spec the
	// class holds and admits; lower while it does not, never higher.
	// Crossplane copies it onto the claim, where kstatus and Argo CD compare
	// it with the claim's own generation. Always written.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration"`

	// BoundEngines counts the engines bound to this class: those whose
	// binding ConfigMap (labelled firebolt.io/engine-class-binding) exists.
	// Not omitted when 0, so that the BOUND column reads 0.
	// +optional
	BoundEngines int32 `json:"boundEngines"`

	// BoundEngineNames names those engines, sorted. A refused deletion
	// quotes the class's Usage of its claim, whose reason points here.
	// +listType=set
	// +optional
	BoundEngineNames []string `json:"boundEngineNames,omitempty"`

	// LastReconciled is when the status was last written.
	// +optional
	LastReconciled *metav1.Time `json:"lastReconciled,omitempty"`
}

// XFireboltEngineClass is a class of Firebolt engines. Users apply its
// claim, FireboltEngineClass.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,path=xfireboltengineclasses,singular=xfireboltengineclass,shortName=xfirengc,categories=firebolt
// +kubebuilder:printcolumn:name="BOUND",type=integer,JSONPath=".status.boundEngines"
type XFireboltEngineClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FireboltEngineClassSpec   `json:"spec"`
	Status FireboltEngineClassStatus `json:"status,omitempty"`
}

// XFireboltEngineClassList is a list of XFireboltEngineClass.
// +kubebuilder:object:root=true
type XFireboltEngineClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []XFireboltEngineClass `json:"items"`
}
