package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	compute "github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// AnnotationManagedBy marks the StatefulSet a PhasedRollout manages with
// the claim's name, as the seed's operator marks it. A second PhasedRollout
// finding another live claim's name there leaves the StatefulSet alone.
const AnnotationManagedBy = Group + "/phasedRollout"

// PhasedRolloutSpec names the StatefulSet to gate and how its updates
// roll out.
type PhasedRolloutSpec struct {
	// TargetRef is the name of the StatefulSet, in the claim's namespace,
	// whose rollouts this claim gates. The StatefulSet is someone else's:
	// only its spec.updateStrategy.rollingUpdate.partition (and a marker
	// annotation) is set, through a provider-kubernetes Object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.targetRef is immutable: set standardRollingUpdate to true, wait for phase suspended, delete this claim and create one for the other StatefulSet"
	TargetRef string `json:"targetRef"`

	// StandardRollingUpdate suspends the phased rollout: the partition is
	// set to 0 and the StatefulSet controller rolls every pod on its own.
	// +optional
	StandardRollingUpdate bool `json:"standardRollingUpdate,omitempty"`

	// Check gates every step of a rollout.
	Check compute.RolloutCheck `json:"check"`
}

// PhasedRolloutStatus is seed 004's rollout status, the claim's generation
// whose spec is in effect, and what was last seen of other writers of the
// partition.
type PhasedRolloutStatus struct {
	compute.PhasedRolloutStatus `json:",inline"`

	// ObservedGeneration is the claim's metadata.generation whose spec is
	// fully in effect: every pod of the target runs its update revision.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// PartitionConflict records the field managers other than this
	// claim's that were last seen setting the target's partition.
	// +optional
	PartitionConflict *PartitionConflict `json:"partitionConflict,omitempty"`

	// LastReconciled is when the status last changed, stamped again while
	// Crossplane's circuit breaker holds the composite's events.
	// +optional
	LastReconciled *metav1.Time `json:"lastReconciled,omitempty"`
}

// PartitionConflict is another writer of the partition, seen in the
// target's managedFields.
type PartitionConflict struct {
	// Managers are the field managers, other than this claim's, that owned
	// spec.updateStrategy.rollingUpdate.partition.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Managers []string `json:"managers"`

	// LastSeenTime is when they were last seen owning it.
	LastSeenTime string `json:"lastSeenTime"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,path=xphasedrollouts,singular=xphasedrollout,shortName=xphr,categories=firebolt
// +kubebuilder:printcolumn:name="TARGET",type=string,JSONPath=".spec.targetRef"
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="PARTITION",type=integer,JSONPath=".status.rollingPodStatus.partition"
// +kubebuilder:printcolumn:name="STEP",type=string,JSONPath=".status.rollingPodStatus.status"
// +kubebuilder:printcolumn:name="REVISION",type=string,JSONPath=".status.updateRevision"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"

// XPhasedRollout is the composite of a PhasedRollout claim.
type XPhasedRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PhasedRolloutSpec   `json:"spec"`
	Status PhasedRolloutStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// XPhasedRolloutList is a list of XPhasedRollout.
type XPhasedRolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []XPhasedRollout `json:"items"`
}
