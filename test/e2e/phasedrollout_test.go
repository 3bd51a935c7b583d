package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// foreignStatefulSet applies a three-pod StatefulSet server-side as a Helm
// chart does (field manager "helm", forced), with the given update
// strategy; the claim never owns it.
func (s *scenario) foreignStatefulSet(name, strategy string) *appsv1.StatefulSet {
	s.t.Helper()
	body := map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": name, "namespace": s.ns},
		"spec": map[string]any{
			"replicas": 3, "serviceName": name,
			"selector":       map[string]any{"matchLabels": map[string]any{"app": name}},
			"updateStrategy": map[string]any{"type": strategy},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "registry.k8s.io/nginx-slim:0.21"}}},
			},
		},
	}
	b, err := json.Marshal(body)
	s.must(err)
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Patch(s.ctx, name, types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: "helm", Force: ptr.To(true)})
	s.must(err)
	return sts
}

// phasedRollout is examples/phased/sample/base/phasedrollout.yaml, the seed's
// sample, in this scenario's namespace, targeting target, checked against
// this scenario's Prometheus with a query that returns data while no pod
// of the target runs a query.
func (s *scenario) phasedRollout(name, target, prometheus string) *unstructured.Unstructured {
	s.t.Helper()
	objs, err := harness.ReadObjects(filepath.Join(harness.Root(), "examples", "phased", "sample", "base", "phasedrollout.yaml"))
	s.must(err)
	if len(objs) != 1 || objs[0].GetKind() != "PhasedRollout" || objs[0].GetAPIVersion() != "sts.plus/v1alpha1" {
		s.t.Fatalf("examples/phased/sample/base/phasedrollout.yaml: want one sts.plus/v1alpha1 PhasedRollout, got %d objects", len(objs))
	}
	u := objs[0]
	u.SetNamespace(s.ns)
	u.SetName(name)
	set(s.t, u, target, "spec", "targetRef")
	set(s.t, u, map[string]any{
		"initialDelaySeconds": int64(phasedInitialDelay / time.Second), "periodSeconds": int64(2), "successThreshold": int64(2),
		"query": map[string]any{
			"expr":      fmt.Sprintf(`sum(firebolt_running_queries{namespace=%q, pod=~"%s-[0-9]+"}) < 1`, s.ns, target),
			"url":       prometheus, // host:port, no scheme, as the seed's sample writes it
			"secretRef": phasedSecret,
		},
	}, "spec", "check")
	return u
}

// objectGVK is provider-kubernetes' Object, what a PhasedRollout composes.
var objectGVK = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha2", Kind: "Object"}

// partitionOf is the StatefulSet's partition, -1 when unset.
func partitionOf(sts *appsv1.StatefulSet) int32 {
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		return *ru.Partition
	}
	return -1
}

// partitionOwners are the field managers that own the StatefulSet's
// partition.
func partitionOwners(sts *appsv1.StatefulSet) []string {
	var out []string
	for _, f := range sts.ManagedFields {
		if f.FieldsV1 != nil && strings.Contains(f.FieldsV1.GetRawString(), `"f:partition"`) {
			out = append(out, f.Manager)
		}
	}
	return out
}

// Issue 26 on the real control plane, with provider-kubernetes installed
// as the Configuration's dependency and a real Prometheus: a PhasedRollout
// gates a StatefulSet a "helm" field manager applied, without ever owning
// it.
func TestPhasedRolloutGatesAForeignStatefulSet(t *testing.T) {
	s := newScenario(t, "s-phr")
	const promAddr = "127.0.0.1:19094"
	prom, err := cp.StartPrometheus(s.ctx, s.ns, promAddr)
	s.must(err)
	t.Cleanup(prom.Stop)
	_, err = cp.Kube.CoreV1().Secrets(s.ns).Create(s.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: phasedSecret, Namespace: s.ns},
		StringData: map[string]string{"token": "e2e-token"},
	}, metav1.CreateOptions{})
	s.must(err)

	const name = "web"
	before := s.foreignStatefulSet(name, "RollingUpdate")
	claim := s.apply(s.phasedRollout("phasedrollout-sample", name, promAddr))
	ok := fmt.Sprintf(`sum(firebolt_running_queries{namespace=%q, pod=~"%s-[0-9]+"}) < 1`, s.ns, name)

	waitRollout := func(what string, done func(phasedState, *unstructured.Unstructured, map[string]string, *appsv1.StatefulSet) bool) phasedState {
		t.Helper()
		var st phasedState
		s.wait(rolloutTimeout, what, func(ctx context.Context) (bool, string, error) {
			u, err := s.get(claim)
			if err != nil || u == nil {
				return false, fmt.Sprintf("claim: %v", err), nil
			}
			st = readPhased(u)
			revs, sts, err := s.statefulSetPods(ctx, name, "app="+name)
			if err != nil {
				return false, st.String() + " " + harness.SeenErr(err), nil
			}
			return done(st, u, revs, sts), fmt.Sprintf("%s partition=%d pods=%v update=%s owners=%v", st, partitionOf(sts), revs, sts.Status.UpdateRevision, partitionOwners(sts)), nil
		})
		return st
	}

	// The claim pins the settled StatefulSet's partition at replicas
	// through its Object, which owns the partition and adds no owner.
	waitRollout("the partition pinned at replicas", func(st phasedState, u *unstructured.Unstructured, revs map[string]string, sts *appsv1.StatefulSet) bool {
		return st.Phase == "updated" && partitionOf(sts) == 3 && len(revs) == 3 && updatedPods(revs, sts) == 3 &&
			harness.Condition(u, "PartitionManaged").Status == "True"
	})
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	s.must(err)
	if sts.UID != before.UID || len(sts.OwnerReferences) != 0 || len(sts.Finalizers) != 0 {
		t.Fatalf("the claim took the StatefulSet over: UID %s (was %s), owners %v, finalizers %v", sts.UID, before.UID, sts.OwnerReferences, sts.Finalizers)
	}
	owners := partitionOwners(sts)
	if len(owners) != 1 || !strings.HasPrefix(owners[0], "provider-kubernetes/") {
		t.Errorf("partition owned by %v, want only provider-kubernetes/<Object>", owners)
	}
	if a := sts.Annotations["sts.plus/phasedRollout"]; a != "phasedrollout-sample" {
		t.Errorf("marker annotation sts.plus/phasedRollout=%q, want the claim's name", a)
	}
	s.waitQuery(promAddr, ok, true)

	// Busy pods: the seed's own trigger (kubectl patch of the template)
	// makes a new revision, and no pod may be let go while the check
	// returns no data.
	cp.Pods.Set(s.ns, name+"-", harness.Behaviour{Mode: harness.Busy, Running: 2})
	s.waitQuery(promAddr, ok, false)
	parts := s.watchPartitions(name)
	trigger := func() {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"labels":{"trigger-rollout":"%d"}}}}}`, time.Now().UnixNano())
		// kubectl patch's default: a strategic merge patch.
		if _, err := cp.Kube.AppsV1().StatefulSets(s.ns).Patch(s.ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("cannot patch StatefulSet %s: %v", name, err)
		}
	}
	trigger()
	held := waitRollout("the rollout held by failing checks", func(st phasedState, _ *unstructured.Unstructured, _ map[string]string, _ *appsv1.StatefulSet) bool {
		return st.Phase == "rolling" && st.Failed >= 3
	})
	revs, sts, err := s.statefulSetPods(s.ctx, name, "app="+name)
	s.must(err)
	if held.Partition != 3 || updatedPods(revs, sts) != 0 || partitionOf(sts) != 3 {
		t.Fatalf("failing checks let pods go: %s, pods %v on update revision %s, partition %d", held, revs, sts.Status.UpdateRevision, partitionOf(sts))
	}

	// Quiet pods: one pod per step, highest ordinal first.
	cp.Pods.Set(s.ns, name+"-", harness.Behaviour{Mode: harness.Idle})
	done := waitRollout("every pod rolled", func(st phasedState, _ *unstructured.Unstructured, revs map[string]string, sts *appsv1.StatefulSet) bool {
		return st.Phase == "updated" && len(revs) == 3 && updatedPods(revs, sts) == 3 && partitionOf(sts) == 3
	})
	if done.EndTime == "" {
		t.Errorf("rolloutEndTime not set once every pod rolled: %s", done)
	}
	s.checkOnePodAtATime(parts, "PhasedRollout", claim.GetName())

	// A second field manager forcing the partition is reported by name. It
	// forces again every few seconds, as Argo CD's self-heal does: the two
	// fight, and provider-kubernetes may take the partition back before
	// Crossplane's next call reads the StatefulSet, so one round may go
	// unseen; the fight may not.
	force := []byte(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":%q,"namespace":%q},"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}`, name, s.ns))
	rounds := 0
	s.wait(rolloutTimeout, "the other field manager reported", func(ctx context.Context) (bool, string, error) {
		u, err := s.get(claim)
		if err != nil || u == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		c := harness.Condition(u, "PartitionManaged")
		if c.Status == "False" && c.Reason == "ConflictingFieldManager" && strings.Contains(c.Message, `"argocd-controller"`) {
			return true, "", nil
		}
		if rounds < 20 {
			rounds++
			_, err := cp.Kube.AppsV1().StatefulSets(s.ns).Patch(ctx, name, types.ApplyPatchType, force, metav1.PatchOptions{FieldManager: "argocd-controller", Force: ptr.To(true)})
			if err != nil {
				return false, "", err
			}
			time.Sleep(3 * time.Second)
		}
		return false, fmt.Sprintf("%d rounds; PartitionManaged %s", rounds, c), nil
	})
	t.Logf("the fight was reported after %d forced applies", rounds)
	// provider-kubernetes takes the partition back.
	waitRollout("the partition taken back", func(_ phasedState, _ *unstructured.Unstructured, _ map[string]string, sts *appsv1.StatefulSet) bool {
		return partitionOf(sts) == 3
	})

	// standardRollingUpdate hands the rollout to the StatefulSet
	// controller: partition 0, every pod rolled with the checks failing.
	cp.Pods.Set(s.ns, name+"-", harness.Behaviour{Mode: harness.Busy, Running: 1})
	s.waitQuery(promAddr, ok, false)
	ri, err := cp.ResourceFor(claim)
	s.must(err)
	_, err = ri.Patch(s.ctx, claim.GetName(), types.MergePatchType, []byte(`{"spec":{"standardRollingUpdate":true}}`), metav1.PatchOptions{})
	s.must(err)
	trigger()
	waitRollout("a standard rolling update with the checks failing", func(st phasedState, _ *unstructured.Unstructured, revs map[string]string, sts *appsv1.StatefulSet) bool {
		return st.Phase == "suspended" && partitionOf(sts) == 0 && len(revs) == 3 && updatedPods(revs, sts) == 3 &&
			sts.Status.UpdateRevision == sts.Status.CurrentRevision
	})

	// Deleting the claim (in the safe order: suspended first) leaves the
	// StatefulSet: same UID, its pods, and partition 0.
	pods, err := cp.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	s.must(err)
	objects, err := cp.Resource(objectGVK, "")
	s.must(err)
	s.must(ri.Delete(s.ctx, claim.GetName(), metav1.DeleteOptions{}))
	s.wait(rolloutTimeout, "the claim and its Object gone", func(ctx context.Context) (bool, string, error) {
		_, err := ri.Get(ctx, claim.GetName(), metav1.GetOptions{})
		if !kerrors.IsNotFound(err) {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		objs, err := objects.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		for _, o := range objs.Items {
			if strings.HasPrefix(o.GetName(), claim.GetName()+"-") {
				return false, "Object " + o.GetName() + " still there", nil
			}
		}
		return true, "", nil
	})
	after, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	s.must(err)
	if after.UID != before.UID || partitionOf(after) != 0 {
		t.Errorf("after the claim was deleted: StatefulSet UID %s (was %s), partition %d (want 0)", after.UID, before.UID, partitionOf(after))
	}
	podsAfter, err := cp.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	s.must(err)
	uids := func(l *corev1.PodList) map[types.UID]bool {
		m := map[types.UID]bool{}
		for _, p := range l.Items {
			m[p.UID] = true
		}
		return m
	}
	if !cmpUIDs(uids(pods), uids(podsAfter)) {
		t.Errorf("deleting the claim touched the pods: %d before, %d after, not the same", len(pods.Items), len(podsAfter.Items))
	}
}

func cmpUIDs(a, b map[types.UID]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// A PhasedRollout whose target is missing, and one whose target uses
// OnDelete, compose nothing and say why; once the StatefulSet appears the
// first one pins its partition.
func TestPhasedRolloutUnusableTargets(t *testing.T) {
	s := newScenario(t, "s-phr-bad")
	_ = s.foreignStatefulSet("ondelete", "OnDelete")
	missing := s.apply(s.phasedRollout("missing", "later", "127.0.0.1:19093"))
	ondelete := s.apply(s.phasedRollout("ondelete", "ondelete", "127.0.0.1:19093"))
	for claim, reason := range map[*unstructured.Unstructured]string{missing: "TargetNotFound", ondelete: "OnDeleteStrategy"} {
		s.wait(rolloutTimeout, claim.GetName()+": Updated False/"+reason, func(context.Context) (bool, string, error) {
			u, err := s.get(claim)
			if err != nil || u == nil {
				return false, fmt.Sprintf("claim: %v", err), nil
			}
			c := harness.Condition(u, "Updated")
			return c.Status == "False" && c.Reason == reason, c.String(), nil
		})
	}
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(s.ctx, "ondelete", metav1.GetOptions{})
	s.must(err)
	if partitionOf(sts) != -1 || sts.Annotations["sts.plus/phasedRollout"] != "" {
		t.Errorf("the OnDelete StatefulSet was changed: partition %d, annotations %v", partitionOf(sts), sts.Annotations)
	}
	objects, err := cp.Resource(objectGVK, "")
	s.must(err)
	objs, err := objects.List(s.ctx, metav1.ListOptions{})
	s.must(err)
	for _, o := range objs.Items {
		if l := o.GetLabels()["crossplane.io/claim-namespace"]; l == s.ns {
			t.Errorf("Object %s composed for an unusable target", o.GetName())
		}
	}

	// The target appears, created as kubectl create or a client-side
	// apply does: its creator's managedFields entry owns the API server's
	// default partition 0, which is no conflict.
	_, err = cp.Kube.AppsV1().StatefulSets(s.ns).Create(s.ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: s.ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(int32(3)), ServiceName: "later",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "later"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "later"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "registry.k8s.io/nginx-slim:0.21"}}},
			},
		},
	}, metav1.CreateOptions{FieldManager: "kubectl-create"})
	s.must(err)
	s.wait(rolloutTimeout, "the target that appeared pinned at replicas, with no conflict reported", func(ctx context.Context) (bool, string, error) {
		sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(ctx, "later", metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		u, err := s.get(missing)
		if err != nil || u == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		c := harness.Condition(u, "PartitionManaged")
		if c.Reason == "ConflictingFieldManager" {
			return false, "", fmt.Errorf("the StatefulSet's creator reported as a conflict: %s", c)
		}
		return partitionOf(sts) == 3 && c.Status == "True", fmt.Sprintf("partition %d, PartitionManaged %s", partitionOf(sts), c), nil
	})
}
