package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Bounds of the provider smoke test's waits: the provider polls every 10s
// (the harness's --poll) and retries a failed apply on its own backoff.
const (
	providerApplyTimeout  = 2 * time.Minute
	providerDeleteTimeout = 2 * time.Minute
)

// TestProviderKubernetesServerSideApply is a smoke test of the provider the
// Configuration depends on, used the way PhasedRollout uses it: an Object
// with management policies Observe and Update, whose manifest holds only a
// StatefulSet's identity, an annotation and the partition, sets that one
// field of a StatefulSet another manager (Helm) applied, server-side, as
// its own field manager; it adds no owner reference, and deleting it leaves
// the StatefulSet where it was.
func TestProviderKubernetesServerSideApply(t *testing.T) {
	s := newScenario(t, "provider-smoke")
	ctx := s.ctx
	const sts, manager, annotation = "web", "helm", "firebolt.io/e2e-provider-smoke"
	object := s.ns + "-" + sts
	objOwner := "provider-kubernetes/" + object

	providerLog := cp.Process(harness.ProviderProcess)
	offset := providerLog.LogSize()
	// Runs before the scenario's own cleanup, which describes the
	// namespace of a failed test: only a passing test removes it.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("===== provider-kubernetes log lines about %s (full log: %s)\n%s", object, providerLog.Log,
				providerLog.LogLines(offset, 200, func(l string) bool { return strings.Contains(l, object) || strings.Contains(l, s.ns) }))
			return
		}
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cp.Kube.CoreV1().Namespaces().Delete(dctx, s.ns, metav1.DeleteOptions{}); err != nil {
			t.Logf("cleanup: cannot delete namespace %s: %v", s.ns, err)
		}
	})

	// Crossplane may manage Objects with no RBAC from deploy/: its RBAC
	// manager aggregates the provider revision's edit role into
	// Crossplane's. And the provider's identity is the one deploy/ grants:
	// patch on StatefulSets, no delete.
	s.wait(30*time.Second, "Crossplane allowed to manage Objects", func(ctx context.Context) (bool, string, error) {
		for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			ok, err := allowed(ctx, "system:serviceaccount:"+harness.CrossplaneNamespace+":crossplane", "kubernetes.crossplane.io", "objects", verb)
			if err != nil || !ok {
				return false, fmt.Sprintf("%s objects.kubernetes.crossplane.io: allowed=%v %v", verb, ok, err), nil
			}
		}
		return true, "", nil
	})
	for verb, want := range map[string]bool{"get": true, "patch": true, "create": false, "delete": false} {
		ok, err := allowed(ctx, "system:serviceaccount:"+harness.CrossplaneNamespace+":provider-kubernetes", "apps", "statefulsets", verb)
		s.must(err)
		if ok != want {
			t.Errorf("provider-kubernetes's service account: %s statefulsets allowed=%v, want %v", verb, ok, want)
		}
	}

	// The StatefulSet, as Helm would apply it: 3 replicas, none let go.
	target := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "StatefulSet",
		"metadata":   map[string]any{"name": sts, "namespace": s.ns, "labels": map[string]any{"app": sts}},
		"spec": map[string]any{
			"replicas":       int64(3),
			"serviceName":    sts,
			"selector":       map[string]any{"matchLabels": map[string]any{"app": sts}},
			"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(3)}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": sts}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": sts, "image": "example.invalid/web:1"}}},
			},
		},
	}}
	ri, err := cp.ResourceFor(target)
	s.must(err)
	applied, err := ri.Apply(ctx, sts, target, metav1.ApplyOptions{FieldManager: manager, Force: true})
	s.must(err)
	uid := applied.GetUID()

	obj := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": object},
		"spec": map[string]any{
			"managementPolicies": []any{"Observe", "Update"},
			"providerConfigRef":  map[string]any{"name": harness.ProviderConfigName},
			"forProvider": map[string]any{"manifest": map[string]any{
				"apiVersion": "apps/v1",
				"kind":       "StatefulSet",
				"metadata": map[string]any{
					"name": sts, "namespace": s.ns,
					"annotations": map[string]any{annotation: "partition"},
				},
				"spec": map[string]any{"updateStrategy": map[string]any{"rollingUpdate": map[string]any{"partition": int64(2)}}},
			}},
		},
	}}
	obj.SetGroupVersionKind(harness.ObjectGVK)
	t.Cleanup(func() { deleteObject(t, obj) })
	s.apply(obj)

	var got *appsv1.StatefulSet
	s.wait(providerApplyTimeout, "the Object to set the partition to 2", func(ctx context.Context) (bool, string, error) {
		got, err = cp.Kube.AppsV1().StatefulSets(s.ns).Get(ctx, sts, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		o, err := cp.Get(ctx, obj)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		p := got.Spec.UpdateStrategy.RollingUpdate
		seen := fmt.Sprintf("partition %v; Object Synced=%s Ready=%s", partition(got), harness.Condition(o, "Synced"), harness.Condition(o, "Ready"))
		return p != nil && p.Partition != nil && *p.Partition == 2, seen, nil
	})

	if got.UID != uid {
		t.Errorf("the StatefulSet's UID is %s, was %s: it was replaced, not patched", got.UID, uid)
	}
	if len(got.OwnerReferences) != 0 {
		t.Errorf("the provider added owner references %+v: deleting the Object could delete the StatefulSet", got.OwnerReferences)
	}
	if got.Annotations[annotation] != "partition" {
		t.Errorf("annotation %s = %q, want the Object's %q", annotation, got.Annotations[annotation], "partition")
	}
	if got.Spec.Replicas == nil || *got.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want Helm's 3 untouched", got.Spec.Replicas)
	}
	partitionOwners := map[string]string{}
	for _, mf := range got.ManagedFields {
		if owns(t, mf, "f:spec", "f:updateStrategy", "f:rollingUpdate", "f:partition") {
			partitionOwners[mf.Manager] = string(mf.Operation)
		}
	}
	if op, ok := partitionOwners[objOwner]; !ok || op != string(metav1.ManagedFieldsOperationApply) || len(partitionOwners) != 1 {
		t.Errorf("f:partition is owned by %v, want %s alone, by Apply (server-side apply with force)", partitionOwners, objOwner)
	}

	// Deleting the Object (no Delete policy) leaves the StatefulSet.
	s.must(cp.Delete(ctx, obj))
	s.wait(providerDeleteTimeout, "the Object gone", func(ctx context.Context) (bool, string, error) {
		o, err := cp.Get(ctx, obj)
		if kerrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		return false, fmt.Sprintf("finalizers %v, Synced=%s", o.GetFinalizers(), harness.Condition(o, "Synced")), nil
	})
	// The garbage collector acts within seconds of a delete; give it time.
	time.Sleep(5 * time.Second)
	after, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(ctx, sts, metav1.GetOptions{})
	switch {
	case err != nil:
		t.Errorf("the StatefulSet is gone after the Object's deletion: %v", err)
	case after.UID != uid:
		t.Errorf("the StatefulSet's UID is %s after the Object's deletion, was %s", after.UID, uid)
	case after.DeletionTimestamp != nil:
		t.Errorf("the StatefulSet is being deleted after the Object's deletion")
	}
}

// allowed asks the API server whether user may do verb on a resource.
func allowed(ctx context.Context, user, group, resource, verb string) (bool, error) {
	ns := strings.Split(strings.TrimPrefix(user, "system:serviceaccount:"), ":")[0]
	r, err := cp.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: group, Resource: resource, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// owns reports whether a managed fields entry holds the field at path.
func owns(t *testing.T, mf metav1.ManagedFieldsEntry, path ...string) bool {
	t.Helper()
	if mf.FieldsV1 == nil {
		return false
	}
	var m map[string]any
	if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &m); err != nil {
		t.Fatalf("cannot decode the managed fields of %s: %v", mf.Manager, err)
	}
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return false
		}
		m = next
	}
	return true
}

func partition(s *appsv1.StatefulSet) any {
	if p := s.Spec.UpdateStrategy.RollingUpdate; p != nil && p.Partition != nil {
		return *p.Partition
	}
	return "unset"
}

// deleteObject deletes an Object left by a failed test, bounded; with the
// provider gone its finalizer would hold it, so it is removed.
func deleteObject(t *testing.T, obj *unstructured.Unstructured) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cp.Delete(ctx, obj); kerrors.IsNotFound(err) {
		return
	}
	err := harness.Wait(ctx, 30*time.Second, "Object "+obj.GetName()+" deleted", func(ctx context.Context) (bool, string, error) {
		_, err := cp.Get(ctx, obj)
		return kerrors.IsNotFound(err), harness.SeenErr(err), nil
	})
	if err == nil {
		return
	}
	ri, rerr := cp.ResourceFor(obj)
	if rerr == nil {
		_, rerr = ri.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
	t.Logf("cleanup: %v; removed the Object's finalizers: %v", err, rerr)
}
