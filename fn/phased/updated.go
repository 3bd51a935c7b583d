package phased

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// TypeUpdated is the condition of a phased StatefulSet (PhasedStatefulSet,
// PhasedRollout) saying whether every pod runs the StatefulSet's update
// revision, as the seed operator's Updated condition.
const TypeUpdated = "Updated"

// Reasons of the Updated condition.
const (
	UpdatedReasonUpdated    = "Updated"
	UpdatedReasonRolling    = "Rolling"
	UpdatedReasonCheckError = "CheckError"
	UpdatedReasonSuspended  = "Suspended"
)

// Updated is the Updated condition of a StatefulSet sts the rollout status
// st describes.
func Updated(sts *appsv1.StatefulSet, st v1alpha1.PhasedRolloutStatus) composite.Condition {
	c := composite.Condition{Type: TypeUpdated, Status: metav1.ConditionFalse}
	switch st.Phase {
	case v1alpha1.PhasedRolloutSuspended:
		c.Reason = UpdatedReasonSuspended
		c.Message = "standardRollingUpdate is true: the StatefulSet controller rolls every pod without checks"
		if sts.Status.CurrentRevision != "" && sts.Status.CurrentRevision == sts.Status.UpdateRevision {
			c.Status = metav1.ConditionTrue
		}
	case v1alpha1.PhasedRolloutUpdated:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, UpdatedReasonUpdated, "every pod runs revision "+st.UpdateRevision
	default:
		c.Reason, c.Message = UpdatedReasonRolling, Describe(st)
		if rp := st.RollingPodStatus; rp != nil && rp.Status == v1alpha1.RollingPodPrometheusError {
			c.Reason = UpdatedReasonCheckError
		}
	}
	return c
}

// Available says every pod of the StatefulSet is available, on a status
// that describes its spec.
func Available(sts *appsv1.StatefulSet, replicas int32) bool {
	return sts != nil && sts.Status.ObservedGeneration >= sts.Generation && sts.Status.AvailableReplicas >= replicas
}

// Settled says the StatefulSet controller has seen the latest spec and
// every pod runs the update revision.
func Settled(sts *appsv1.StatefulSet, replicas int32) bool {
	return Available(sts, replicas) && sts.Status.UpdatedReplicas >= replicas &&
		sts.Status.CurrentRevision != "" && sts.Status.CurrentRevision == sts.Status.UpdateRevision
}

// PodName is the name of a StatefulSet's pod with the given ordinal.
func PodName(statefulSet string, ordinal int32) string {
	return statefulSet + "-" + strconv.FormatInt(int64(ordinal), 10)
}
