package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	compute "github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// PhasedStatefulSetSpec is a StatefulSet and how its updates roll out.
type PhasedStatefulSetSpec struct {
	// StatefulSet is the StatefulSet to run, named after the claim in the
	// claim's namespace. The function owns
	// spec.updateStrategy.rollingUpdate.partition.
	StatefulSet StatefulSetTemplate `json:"statefulSet"`

	// StandardRollingUpdate suspends the phased rollout: the partition is
	// set to 0 and the StatefulSet controller rolls every pod on its own.
	// +optional
	StandardRollingUpdate bool `json:"standardRollingUpdate,omitempty"`

	// Check gates every step of a rollout.
	Check compute.RolloutCheck `json:"check"`
}

// StatefulSetTemplate is the composed StatefulSet's metadata and spec.
type StatefulSetTemplate struct {
	// Metadata: labels and annotations of the StatefulSet.
	// +optional
	Metadata ObjectMetaTemplate `json:"metadata,omitempty"`

	// Spec of the StatefulSet.
	// +kubebuilder:validation:XValidation:rule="!has(self.updateStrategy) || !has(self.updateStrategy.type) || self.updateStrategy.type == 'RollingUpdate'",message="spec.statefulSet.spec.updateStrategy.type must be RollingUpdate: a phased rollout moves pods by lowering the partition, which OnDelete ignores"
	// +kubebuilder:validation:XValidation:rule="!has(self.updateStrategy) || !has(self.updateStrategy.rollingUpdate) || !has(self.updateStrategy.rollingUpdate.partition)",message="spec.statefulSet.spec.updateStrategy.rollingUpdate.partition is set by the phased rollout; leave it out"
	// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas <= 1000",message="spec.statefulSet.spec.replicas may be at most 1000"
	Spec appsv1.StatefulSetSpec `json:"spec"`
}

// ObjectMetaTemplate is the part of an object's metadata a user sets.
type ObjectMetaTemplate struct {
	// Labels of the object.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations of the object.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PhasedStatefulSetStatus is seed 004's rollout status, and the claim's
// generation whose spec is in effect.
type PhasedStatefulSetStatus struct {
	compute.PhasedRolloutStatus `json:",inline"`

	// ObservedGeneration is the claim's metadata.generation whose spec is
	// fully in effect: every pod runs the revision of that spec.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastReconciled is when the status last changed, stamped again while
	// Crossplane's circuit breaker holds the composite's events.
	// +optional
	LastReconciled *metav1.Time `json:"lastReconciled,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,path=xphasedstatefulsets,singular=xphasedstatefulset,shortName=xphsts,categories=firebolt
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="PARTITION",type=integer,JSONPath=".status.rollingPodStatus.partition"
// +kubebuilder:printcolumn:name="STEP",type=string,JSONPath=".status.rollingPodStatus.status"
// +kubebuilder:printcolumn:name="REVISION",type=string,JSONPath=".status.updateRevision"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"

// XPhasedStatefulSet is the composite of a PhasedStatefulSet claim.
type XPhasedStatefulSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PhasedStatefulSetSpec   `json:"spec"`
	Status PhasedStatefulSetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// XPhasedStatefulSetList is a list of XPhasedStatefulSet.
type XPhasedStatefulSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []XPhasedStatefulSet `json:"items"`
}
