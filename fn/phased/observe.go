package phased

import appsv1 "k8s.io/api/apps/v1"

// Pod is what Step reads of one pod: its ordinal and the revision it runs
// (its controller-revision-hash label).
type Pod struct {
	Ordinal  int32
	Revision string
}

// ObserveStatefulSet is what Step reads of the observed StatefulSet and of
// pod, the pod at its partition when the caller has it.
func ObserveStatefulSet(sts *appsv1.StatefulSet, pod *Pod) *Observed {
	o := &Observed{
		Generation:         sts.Generation,
		SpecReplicas:       SpecReplicas(sts),
		ObservedGeneration: sts.Status.ObservedGeneration,
		Replicas:           sts.Status.Replicas,
		UpdatedReplicas:    sts.Status.UpdatedReplicas,
		AvailableReplicas:  sts.Status.AvailableReplicas,
		CurrentRevision:    sts.Status.CurrentRevision,
		UpdateRevision:     sts.Status.UpdateRevision,
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		o.Partition = ru.Partition
	}
	if pod != nil {
		o.PodRevisions = map[int32]string{pod.Ordinal: pod.Revision}
	}
	return o
}

// Partition is the StatefulSet's partition; unset counts as 0, as the
// StatefulSet controller reads it. A negative one names no pod.
func Partition(sts *appsv1.StatefulSet) (int32, bool) {
	ru := sts.Spec.UpdateStrategy.RollingUpdate
	if ru == nil || ru.Partition == nil {
		return 0, true
	}
	if *ru.Partition < 0 {
		return 0, false
	}
	return *ru.Partition, true
}

// SpecReplicas is spec.replicas as the API server defaults it.
func SpecReplicas(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return *sts.Spec.Replicas
}

// RolledPod is the ordinal of the pod a step let go last, the one at the
// StatefulSet's partition, when the partition lets one go.
func RolledPod(sts *appsv1.StatefulSet) (int32, bool) {
	p, ok := Partition(sts)
	return p, ok && p < SpecReplicas(sts)
}
