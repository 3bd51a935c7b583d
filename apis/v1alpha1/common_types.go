package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RolloutStrategy says how an engine rolls out a change.
// +kubebuilder:validation:Enum=graceful;recreate;phased
type RolloutStrategy string

// Rollout strategies.
const (
	// RolloutGraceful waits for the old generation to drain before deleting it.
	RolloutGraceful RolloutStrategy = "graceful"
	// RolloutRecreate treats the old generation as drained at once.
	RolloutRecreate RolloutStrategy = "recreate"
	// RolloutPhased updates the serving generation in place, one pod at a
	// time (seed 004), for a change of its pod template alone; any other
	// change still rolls a new generation gracefully.
	RolloutPhased RolloutStrategy = "phased"
)

// EngineStorageSpec is the per-pod data volume mounted at /var/lib/firebolt.
// At most one backend may be set; with none set the engine inherits its
// class's storage, and with neither an emptyDir is used.
// +kubebuilder:validation:XValidation:rule="[has(self.persistentVolumeClaim), has(self.emptyDir), has(self.hostPath)].filter(x, x).size() <= 1",message="spec.storage: persistentVolumeClaim, emptyDir and hostPath are mutually exclusive"
type EngineStorageSpec struct {
	// PersistentVolumeClaim gives every pod its own PersistentVolumeClaim.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimStorageSpec `json:"persistentVolumeClaim,omitempty"`

	// EmptyDir gives every pod an emptyDir volume that dies with the pod.
	// +optional
	EmptyDir *EmptyDirStorageSpec `json:"emptyDir,omitempty"`

	// HostPath mounts a directory of the node.
	// +optional
	HostPath *HostPathStorageSpec `json:"hostPath,omitempty"`
}

// PersistentVolumeClaimStorageSpec configures the per-pod volume claim.
type PersistentVolumeClaimStorageSpec struct {
	// Size requested for each pod's volume.
	// +kubebuilder:default="1Gi"
	// +optional
	Size resource.Quantity `json:"size,omitempty"`

	// AccessModes of the claim.
	// +kubebuilder:default={"ReadWriteOnce"}
	// +optional
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`

	// StorageClassName of the claim: unset uses the cluster's default class,
	// "" disables dynamic provisioning.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// EmptyDirStorageSpec configures the per-pod emptyDir volume.
type EmptyDirStorageSpec struct {
	// Medium backing the volume: "" for the node's default, Memory for tmpfs.
	// +kubebuilder:validation:Enum="";Memory
	// +optional
	Medium corev1.StorageMedium `json:"medium,omitempty"`

	// SizeLimit of the volume.
	// +optional
	SizeLimit *resource.Quantity `json:"sizeLimit,omitempty"`
}

// HostPathStorageSpec configures the node directory mounted as data volume.
type HostPathStorageSpec struct {
	// Path of the directory on the node.
	// +kubebuilder:validation:Pattern=`^/.*`
	Path string `json:"path"`

	// Type of the host path, as for a hostPath volume.
	// +optional
	Type *corev1.HostPathType `json:"type,omitempty"`
}

// AutoStopSpec scales an idle engine down and back up, as the original
// operator's: the decision is written to status.autoStop and composed, and
// spec.replicas is never changed.
// +kubebuilder:validation:XValidation:rule="self.activeReplicas >= (has(self.idleReplicas) ? self.idleReplicas : 0)",message="spec.autoStop.activeReplicas must be greater than or equal to spec.autoStop.idleReplicas"
type AutoStopSpec struct {
	// Enabled turns auto-stop on.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// ActiveReplicas is the replica count while the engine is active; at
	// most 1000, as spec.replicas.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	ActiveReplicas int32 `json:"activeReplicas"`

	// IdleReplicas is the replica count while the engine is idle; at most
	// 1000, as spec.replicas.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +optional
	IdleReplicas *int32 `json:"idleReplicas,omitempty"`

	// IdleTimeout is how long the engine must be quiet before it idles.
	// +kubebuilder:default="30m"
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be a positive duration such as 5s or 1m30s"
	// +optional
	IdleTimeout *metav1.Duration `json:"idleTimeout,omitempty"`

	// PollInterval is how often activity is observed, at least 1s: each
	// poll is a function call and a scrape of every pod.
	// +kubebuilder:default="1m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="must be a duration of at least 1s, such as 5s or 1m30s"
	// +optional
	PollInterval *metav1.Duration `json:"pollInterval,omitempty"`

	// Schedule lists windows during which the engine stays active.
	// +optional
	Schedule []AutoStopWindow `json:"schedule,omitempty"`
}

// AutoStopWindow is a daily UTC window during which an engine stays at
// activeReplicas: in at start, out at end. An end before the start crosses
// midnight, and the part after midnight belongs to the start's day; an end
// equal to the start is an empty window.
type AutoStopWindow struct {
	// Start of the window, HH:MM in UTC.
	// +kubebuilder:validation:Pattern=`^([01]\d|2[0-3]):[0-5]\d$`
	Start string `json:"start"`

	// End of the window, HH:MM in UTC; not included.
	// +kubebuilder:validation:Pattern=`^([01]\d|2[0-3]):[0-5]\d$`
	End string `json:"end"`

	// Days on which the window starts, in UTC; every day when empty.
	// +optional
	Days []Weekday `json:"days,omitempty"`
}

// Weekday is a day of the week.
// +kubebuilder:validation:Enum=Mon;Tue;Wed;Thu;Fri;Sat;Sun
type Weekday string
