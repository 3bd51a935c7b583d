package phasedrollout_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/phasedrollout"
)

// The seed's workflow through RunFunction: the claim pins a settled
// target's partition at replicas through an Object that may only observe
// and update it; someone else's template change rolls one pod per step,
// highest ordinal first, each step held until the check returns data; the
// token reaches Prometheus and nothing else (sim.call checks every
// response).
func TestRunFunctionRollsATargetPodByPod(t *testing.T) {
	prom := newPromServer(t)
	s := newSim(t, prom.URL)
	s.run(10, func() bool { return s.phase() == "updated" && s.sts.Partition == 3 })

	obj := s.object
	if got := obj["spec"].(map[string]any)["managementPolicies"]; !cmp.Equal(got, []any{"Observe", "Update"}) {
		t.Errorf("managementPolicies %v, want [Observe Update]: the Object must never create or delete the target", got)
	}
	if got := obj["metadata"].(map[string]any)["name"]; got != simXR {
		t.Errorf("Object name %v, want the composite's %s (its field manager is provider-kubernetes/<name>)", got, simXR)
	}
	m := manifest(obj)
	wantManifest := map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": simTarget, "namespace": simNamespace, "annotations": map[string]any{"sts.plus/phasedRollout": simClaim}},
		"spec":     map[string]any{"updateStrategy": map[string]any{"rollingUpdate": map[string]any{"partition": float64(3)}}},
	}
	if diff := cmp.Diff(wantManifest, m); diff != "" {
		t.Errorf("the Object's manifest holds more than the target's identity, the marker and the partition: -want, +got:\n%s", diff)
	}
	if c := s.condition(phasedrollout.TypePartitionManaged); c.GetReason() != phasedrollout.ReasonPending {
		t.Errorf("PartitionManaged before provider-kubernetes reported: %s %q, want %s", c.GetReason(), c.GetMessage(), phasedrollout.ReasonPending)
	}
	s.synced = map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}

	s.sts.edit("web-r2")
	before := prom.queries.Load()
	s.run(20, func() bool { return s.phase() == "rolling" })
	for range 20 {
		s.call()
		if !s.sts.Tick() {
			s.now = s.now.Add(s.rsp.GetMeta().GetTtl().AsDuration())
		}
	}
	if s.sts.Partition != 3 || s.sts.Updated() != 0 {
		t.Fatalf("a pod was let go while the check returned no data: partition %d, %d pods updated", s.sts.Partition, s.sts.Updated())
	}
	if prom.queries.Load() == before {
		t.Fatal("no check was run")
	}
	if c := s.condition(phased.TypeUpdated); c.GetReason() != phased.UpdatedReasonRolling || !strings.Contains(c.GetMessage(), "returned no data") {
		t.Errorf("Updated while held: %s %q", c.GetReason(), c.GetMessage())
	}
	prom.data.Store(true)
	s.run(300, func() bool { return s.phase() == "updated" && s.sts.Partition == 3 })
	if want := []int32{3, 2, 1, 0, 3}; !cmp.Equal(want, s.partitions) {
		t.Errorf("partitions %v, want %v", s.partitions, want)
	}
	if c := s.condition(phased.TypeUpdated); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
		t.Errorf("Updated after the rollout: %s %s %q", c.GetStatus(), c.GetReason(), c.GetMessage())
	}
	if c := s.condition(phasedrollout.TypePartitionManaged); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE || c.GetReason() != phasedrollout.ReasonManaged {
		t.Errorf("PartitionManaged once synced: %s %s %q", c.GetStatus(), c.GetReason(), c.GetMessage())
	}
}

// standardRollingUpdate hands the rollout to the StatefulSet controller:
// the Object sets partition 0 and the phase is suspended; turning it off
// again holds the next change at replicas.
func TestRunFunctionStandardRollingUpdate(t *testing.T) {
	s := newSim(t, newPromServer(t).URL)
	s.run(10, func() bool { return s.phase() == "updated" && s.sts.Partition == 3 })
	s.spec["standardRollingUpdate"] = true
	s.sts.edit("web-r2")
	s.run(30, func() bool {
		return s.phase() == "suspended" && s.sts.Updated() == 3 && s.sts.CurrentRevision == "web-r2"
	})
	if s.sts.Partition != 0 {
		t.Errorf("suspended with partition %d, want 0", s.sts.Partition)
	}
	s.spec["standardRollingUpdate"] = false
	s.run(10, func() bool { return s.phase() == "updated" && s.sts.Partition == 3 })
}

// A target that is missing, or that uses OnDelete, gets no Object (so
// nothing is applied to it) and a condition saying why, with one Warning;
// a target that appears, or switches to RollingUpdate, is then managed.
func TestRunFunctionComposesNothingForAnUnusableTarget(t *testing.T) {
	for name, tc := range map[string]struct {
		unusable, fix func(*target)
		reason        string
		says          string
	}{
		"Missing": {
			unusable: func(s *target) { s.exists = false },
			fix:      func(s *target) { s.exists = true },
			reason:   phasedrollout.ReasonTargetNotFound,
			says:     "StatefulSet sample/web not found",
		},
		"OnDelete": {
			unusable: func(s *target) { s.strategy = "OnDelete" },
			fix:      func(s *target) { s.strategy = "RollingUpdate" },
			reason:   phasedrollout.ReasonOnDelete,
			says:     "has updateStrategy.type OnDelete",
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSim(t, newPromServer(t).URL)
			tc.unusable(s.sts)
			for range 3 {
				s.call()
				s.now = s.now.Add(time.Minute)
			}
			if len(s.rsp.GetDesired().GetResources()) != 0 {
				t.Fatalf("composed %v for an unusable target", s.rsp.GetDesired().GetResources())
			}
			c := s.condition(phased.TypeUpdated)
			if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != tc.reason || !strings.Contains(c.GetMessage(), tc.says) {
				t.Errorf("Updated: %s %s %q, want False %s saying %q", c.GetStatus(), c.GetReason(), c.GetMessage(), tc.reason, tc.says)
			}
			warnings := 0
			for _, r := range s.results {
				if r.GetReason() == tc.reason && r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
					warnings++
				}
			}
			if warnings != 1 {
				t.Errorf("%d %s Warnings over 3 calls, want 1", warnings, tc.reason)
			}
			if s.rsp.GetDesired().GetComposite().GetReady() == fnv1.Ready_READY_TRUE {
				t.Error("ready with an unusable target")
			}
			tc.fix(s.sts)
			s.run(10, func() bool { return s.phase() == "updated" && s.sts.Partition == 3 })
		})
	}
}

// The seed's marker: a target another live claim manages (its name in the
// annotation, and it targets the same StatefulSet) is left alone; a marker
// naming a claim that is gone, or that targets another StatefulSet, is
// taken over.
func TestRunFunctionMarkedByAnotherClaim(t *testing.T) {
	other := func(target string) map[string]any {
		return map[string]any{"apiVersion": "sts.plus/v1alpha1", "kind": "PhasedRollout",
			"metadata": map[string]any{"name": "other", "namespace": simNamespace}, "spec": map[string]any{"targetRef": target}}
	}
	for name, tc := range map[string]struct {
		others map[string]map[string]any
		left   bool
	}{
		"LiveClaimOfTheSameTarget": {others: map[string]map[string]any{"other": other(simTarget)}, left: true},
		"ClaimGone":                {others: map[string]map[string]any{}},
		"ClaimOfAnotherTarget":     {others: map[string]map[string]any{"other": other("db")}},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSim(t, newPromServer(t).URL)
			s.sts.annotations = map[string]any{"sts.plus/phasedRollout": "other"}
			s.others = tc.others
			s.call()
			c := s.condition(phased.TypeUpdated)
			if tc.left {
				if len(s.rsp.GetDesired().GetResources()) != 0 || c.GetReason() != phasedrollout.ReasonManagedElsewhere ||
					!strings.Contains(c.GetMessage(), "managed by PhasedRollout other") {
					t.Fatalf("a target another claim manages: resources %v, Updated %s %q", s.rsp.GetDesired().GetResources(), c.GetReason(), c.GetMessage())
				}
				return
			}
			if s.object == nil || manifest(s.object)["metadata"].(map[string]any)["annotations"].(map[string]any)["sts.plus/phasedRollout"] != simClaim {
				t.Fatalf("the target was not taken over: Object %v, Updated %s %q", s.object, c.GetReason(), c.GetMessage())
			}
		})
	}
}

// managedFieldsEntry is a managedFields entry of manager owning the
// partition (and, for realism, replicas).
func managedFieldsEntry(manager, op string) map[string]any {
	return map[string]any{
		"manager": manager, "operation": op, "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{},
			"f:updateStrategy": map[string]any{"f:rollingUpdate": map[string]any{"f:partition": map[string]any{}}}}},
	}
}

// at is e with its time.
func at(e map[string]any, t string) map[string]any { e["time"] = t; return e }

// annotationOnly is our entry once another manager took the partition:
// it still owns the marker annotation.
func annotationOnly(manager string) map[string]any {
	return map[string]any{
		"manager": manager, "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{"f:sts.plus/phasedRollout": map[string]any{}}}},
	}
}

// Who counts as another writer of the partition. Whoever created the
// StatefulSet with a client-side apply or a create owns the API server's
// default partition 0 in managedFields: that is no writer, neither before
// this claim's first apply nor while it shares the value since. A manager
// that took the partition from ours, or set the same value after ours, is.
func TestRunFunctionPartitionWriters(t *testing.T) {
	ours := phasedrollout.FieldManager(simXR)
	for name, tc := range map[string]struct {
		fields []any
		want   []any
	}{
		"CreatorBeforeFirstApply": {
			fields: []any{at(managedFieldsEntry("kubectl-client-side-apply", "Update"), "2026-11-24T11:00:00Z")},
		},
		"CreatorSharingSinceFirstApply": {
			fields: []any{at(managedFieldsEntry("kubectl-client-side-apply", "Update"), "2026-11-24T11:00:00Z"), at(managedFieldsEntry(ours, "Apply"), "2026-11-24T11:30:00Z")},
		},
		"SharedByALaterApply": {
			fields: []any{at(managedFieldsEntry(ours, "Apply"), "2026-11-24T11:30:00Z"), at(managedFieldsEntry("helm", "Apply"), "2026-11-24T11:45:00Z")},
			want:   []any{"helm"},
		},
		"TakenFromUs": {
			fields: []any{at(managedFieldsEntry("argocd-controller", "Apply"), "2026-11-24T11:00:00Z"), at(annotationOnly(ours), "2026-11-24T11:30:00Z")},
			want:   []any{"argocd-controller"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSim(t, newPromServer(t).URL)
			s.sts.managedFields = tc.fields
			s.call()
			var got []any
			if c, ok := s.status["partitionConflict"].(map[string]any); ok {
				got, _ = c["managers"].([]any)
			}
			if !cmp.Equal(tc.want, got) {
				t.Errorf("partitionConflict.managers %v, want %v", got, tc.want)
			}
		})
	}
}

// Another field manager that owns the partition (Helm applying a chart that
// sets it) is named in PartitionManaged and in one Warning, and stays named
// for ten minutes after it was last seen, since provider-kubernetes takes
// the partition back on its next poll; then the condition clears on a
// timer the call asks for.
func TestRunFunctionReportsAnotherPartitionWriter(t *testing.T) {
	s := newSim(t, newPromServer(t).URL)
	s.synced = map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}
	s.run(10, func() bool { return s.phase() == "updated" && s.sts.Partition == 3 })
	ours := phasedrollout.FieldManager(simXR)
	s.sts.managedFields = []any{managedFieldsEntry("helm", "Apply"), managedFieldsEntry(ours, "Apply"),
		map[string]any{"manager": "kube-controller-manager", "operation": "Update", "subresource": "status", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:status": map[string]any{}}}}
	s.call()
	c := s.condition(phasedrollout.TypePartitionManaged)
	if c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != phasedrollout.ReasonConflictingManager ||
		!strings.Contains(c.GetMessage(), `field manager "helm"`) || strings.Contains(c.GetMessage(), "kube-controller-manager") {
		t.Fatalf("PartitionManaged with helm owning the partition: %s %s %q", c.GetStatus(), c.GetReason(), c.GetMessage())
	}
	if got := s.status["partitionConflict"].(map[string]any)["managers"]; !cmp.Equal(got, []any{"helm"}) {
		t.Errorf("status.partitionConflict.managers %v, want [helm]", got)
	}
	s.call()
	warnings := 0
	for _, r := range s.results {
		if r.GetReason() == phasedrollout.ReasonConflictingManager {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d ConflictingFieldManager Warnings for one conflict seen twice, want 1", warnings)
	}

	// provider-kubernetes forces the partition back: helm owns it no more.
	seen := s.now
	s.sts.managedFields = []any{managedFieldsEntry(ours, "Apply")}
	s.sts.Tick()
	s.now = seen.Add(9 * time.Minute)
	rsp := s.call()
	if c := s.condition(phasedrollout.TypePartitionManaged); c.GetReason() != phasedrollout.ReasonConflictingManager {
		t.Errorf("9 minutes after the conflict was last seen: %s %q, want it still reported", c.GetReason(), c.GetMessage())
	}
	if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl > time.Minute+time.Second {
		t.Errorf("TTL %s, want the call back when the conflict's memory ends (in a minute)", ttl)
	}
	s.now = seen.Add(10*time.Minute + time.Second)
	s.call()
	if c := s.condition(phasedrollout.TypePartitionManaged); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
		t.Errorf("10 minutes after the conflict: %s %s %q, want True", c.GetStatus(), c.GetReason(), c.GetMessage())
	}
	if _, ok := s.status["partitionConflict"]; ok {
		t.Errorf("status.partitionConflict %v kept after its memory ended", s.status["partitionConflict"])
	}
}

// Anyone who can write the target writes its managedFields: thousands of
// entries, huge manager names and garbage fields cost a bounded amount
// and report a bounded message.
func TestRunFunctionHostileManagedFields(t *testing.T) {
	s := newSim(t, newPromServer(t).URL)
	s.call()
	var fields []any
	for i := range 5000 {
		name := fmt.Sprintf("writer-%04d-%s", i, strings.Repeat("é", 200))
		fields = append(fields, managedFieldsEntry(name, "Update"))
	}
	fields = append([]any{annotationOnly(phasedrollout.FieldManager(simXR)),
		map[string]any{"manager": "garbage", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": "not an object"}}}, fields...)
	s.sts.managedFields = fields
	s.call()
	managers, _ := s.status["partitionConflict"].(map[string]any)["managers"].([]any)
	if len(managers) == 0 || len(managers) > 8 {
		t.Fatalf("%d managers reported, want between 1 and 8", len(managers))
	}
	for _, m := range managers {
		if n := len(m.(string)); n > 128 {
			t.Errorf("a manager name of %d bytes reported, want at most 128", n)
		}
	}
	if c := s.condition(phasedrollout.TypePartitionManaged); len(c.GetMessage()) > 4096 {
		t.Errorf("PartitionManaged message of %d bytes", len(c.GetMessage()))
	}
}

// provider-kubernetes failing to apply (RBAC, a missing ProviderConfig) is
// reported with its message.
func TestRunFunctionReportsApplyFailure(t *testing.T) {
	s := newSim(t, newPromServer(t).URL)
	s.call()
	s.synced = map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError",
		"message": `update failed: statefulsets.apps "web" is forbidden: User "system:serviceaccount:crossplane-system:provider-kubernetes" cannot patch resource "statefulsets"` + strings.Repeat("!", 5000)}
	s.call()
	c := s.condition(phasedrollout.TypePartitionManaged)
	if c.GetReason() != phasedrollout.ReasonApplyFailed || !strings.Contains(c.GetMessage(), "cannot patch resource") || len(c.GetMessage()) > 1024 {
		t.Errorf("PartitionManaged with the Object failing: %s %q (%d bytes)", c.GetReason(), c.GetMessage(), len(c.GetMessage()))
	}
}
