package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 11: internal PostgreSQL's volume goes with its instance. The
// StatefulSet asks for it (persistentVolumeClaimRetentionPolicy
// whenDeleted: Delete), kube-controller-manager's StatefulSet controller
// makes the claim a dependent of the StatefulSet, and its garbage
// collector deletes the claim once the StatefulSet is gone. An instance
// re-created under the same name then starts on a fresh volume with a fresh
// Secret and reaches Ready.
func TestInstanceDeletionTakesItsVolume(t *testing.T) {
	s := newScenario(t, "s11-instance-volume")
	inst := s.apply(s.instance("demo"))
	s.waitInstanceReady(inst)

	const pvcName, stsName, secretName = "data-demo-metadata-pg-0", "demo-metadata-pg", "demo-metadata-postgres-creds"
	var oldPVC, oldSecret types.UID
	s.wait(rolloutTimeout, "PostgreSQL's volume claim owned by its StatefulSet", func(ctx context.Context) (bool, string, error) {
		sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(ctx, stsName, metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		pvc, err := cp.Kube.CoreV1().PersistentVolumeClaims(s.ns).Get(ctx, pvcName, metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		oldPVC = pvc.UID
		for _, r := range pvc.OwnerReferences {
			if r.Kind == "StatefulSet" && r.UID == sts.UID {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("owners %v", pvc.OwnerReferences), nil
	})
	secret, err := cp.Kube.CoreV1().Secrets(s.ns).Get(s.ctx, secretName, metav1.GetOptions{})
	s.must(err)
	oldSecret = secret.UID

	s.must(cp.Delete(s.ctx, inst))
	s.wait(deletionTimeout, "the claim, PostgreSQL's StatefulSet, Secret and volume claim gone", func(ctx context.Context) (bool, string, error) {
		var left []string
		if u, err := s.get(inst); err != nil || u != nil {
			left = append(left, fmt.Sprintf("claim (%v)", err))
		}
		gone := func(kind string, err error) {
			if !kerrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("%s (%v)", kind, err))
			}
		}
		_, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(ctx, stsName, metav1.GetOptions{})
		gone("StatefulSet "+stsName, err)
		_, err = cp.Kube.CoreV1().Secrets(s.ns).Get(ctx, secretName, metav1.GetOptions{})
		gone("Secret "+secretName, err)
		_, err = cp.Kube.CoreV1().PersistentVolumeClaims(s.ns).Get(ctx, pvcName, metav1.GetOptions{})
		gone("PersistentVolumeClaim "+pvcName, err)
		return len(left) == 0, "left: " + strings.Join(left, ", "), nil
	})

	inst = s.apply(s.instance("demo"))
	s.waitInstanceReady(inst)
	// The StatefulSet controller creates the volume claim; under load its
	// informer can still be catching up when the instance reads Ready, so
	// the claim is waited for rather than read once.
	var newPVC types.UID
	s.wait(rolloutTimeout, "the re-created instance's volume claim", func(ctx context.Context) (bool, string, error) {
		pvc, err := cp.Kube.CoreV1().PersistentVolumeClaims(s.ns).Get(ctx, pvcName, metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		newPVC = pvc.UID
		return true, "", nil
	})
	secret, err = cp.Kube.CoreV1().Secrets(s.ns).Get(s.ctx, secretName, metav1.GetOptions{})
	s.must(err)
	if newPVC == oldPVC || secret.UID == oldSecret {
		t.Errorf("the re-created instance reuses the old volume claim (%v) or Secret (%v)", newPVC == oldPVC, secret.UID == oldSecret)
	}
}
