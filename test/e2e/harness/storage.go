package harness

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// The default StorageClass and the provisioner the harness plays for it:
// the internal PostgreSQL StatefulSet claims a volume, and without a bound
// claim the scheduler never places its pod.
const (
	StorageClassName = "e2e-fake"
	provisionerName  = "e2e.firebolt.io/fake"
)

// volumeListers read claims and volumes from the harness's informer cache.
type volumeListers struct {
	pvcs corelisters.PersistentVolumeClaimLister
	pvs  corelisters.PersistentVolumeLister
}

// provisionVolumes binds every claim of the fake class to a new hostPath
// volume (never used: KWOK runs no containers) and deletes released ones,
// until ctx ends.
func (c *Cluster) provisionVolumes(ctx context.Context, l volumeListers) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		pvcs, err := l.pvcs.List(labels.Everything())
		if err != nil {
			return
		}
		for _, pvc := range pvcs {
			if pvc.Spec.VolumeName != "" || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != StorageClassName || pvc.DeletionTimestamp != nil {
				continue
			}
			size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
			if size.IsZero() {
				size = resource.MustParse("1Gi")
			}
			pv := &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{
					Name:        "pv-" + string(pvc.UID),
					Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": provisionerName},
				},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
					AccessModes:                   pvc.Spec.AccessModes,
					StorageClassName:              StorageClassName,
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
					ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
					PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/nonexistent/" + string(pvc.UID)}},
				},
			}
			if _, err := c.Kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
				c.logf("fake provisioner: cannot create %s: %v", pv.Name, err)
			}
		}
		pvs, err := l.pvs.List(labels.Everything())
		if err != nil {
			return
		}
		for _, pv := range pvs {
			if pv.Spec.StorageClassName == StorageClassName && pv.Status.Phase == corev1.VolumeReleased {
				_ = c.Kube.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
			}
		}
	}, time.Second)
}
