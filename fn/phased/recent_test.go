package phased

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// loweredTo1 is the status a call wrote 3 s ago when it lowered the
// partition from 2 to 1 on the StatefulSet at generation 4 (sts's).
var loweredTo1 = rollingR2(rps{Status: waitPod, Partition: 1})

func recentLowering(mods ...func(*Recent)) func(*Input) {
	return func(in *Input) {
		r := &Recent{At: now.Add(-3 * time.Second), UpdateRevision: r2, Generation: 4, Partition: 1, Status: loweredTo1}
		for _, m := range mods {
			m(r)
		}
		in.Recent = r
	}
}

// applied is the StatefulSet once the lowering's apply has landed: one
// generation on.
func applied(o *Observed) { o.Generation, o.ObservedGeneration = 5, 5 }

func TestStepRecent(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     Input
		want   Decision
	}{
		"StaleSnapshotRendersTheLoweringAgain": {
			reason: "Status and StatefulSet both from before the lowering (generation 4, partition 2), its check passing again: the lowering to 1 is rendered with its status, not partition 2, and no second StepDone.",
			in:     input(sts(2), rollingR2(checking(2, 0, 0)), success, recentLowering()),
			want: Decision{Status: loweredTo1, Partition: 1, TTL: 5 * time.Second, Notes: []string{
				"the StatefulSet observed (generation 4, partition 2) is older than this function's move to partition 1 3s ago: the move is rendered again"}, Reasserted: true},
		},
		"StaleStatefulSetFreshStatus": {
			reason: "The status has the lowering, the StatefulSet is from before it: the drain gate would otherwise hold (render) partition 2 again.",
			in:     input(sts(2), loweredTo1, gate(nil), recentLowering()),
			want: Decision{Status: loweredTo1, Partition: 1, TTL: 5 * time.Second, Notes: []string{
				"the StatefulSet observed (generation 4, partition 2) is older than this function's move to partition 1 3s ago: the move is rendered again"}, Reasserted: true},
		},
		"StatusOlderThanTheLowering": {
			reason: "The StatefulSet holds the lowering (generation 5, partition 1) but the status is from before it: the step goes on at 1, where the status alone would render 2 and roll pod 1 back.",
			in:     input(sts(1, applied), rollingR2(checking(2, 0, 0)), success, recentLowering()),
			want: Decision{
				Status:    rollingR2(rps{Status: waitDelay, Partition: 1, AnalysisStartTime: ts(0)}),
				Partition: 1, TTL: 60 * time.Second,
				Notes: []string{"rollingPodStatus.partition 2 is older than this function's move to partition 1 3s ago: the rollout goes on from that move"},
			},
		},
		"CompletionRemembered": {
			reason: "A snapshot from before the completion (partition 0, pods not yet declared current): the completion's partition and status are rendered again, no second Completed.",
			in: input(sts(0), rollingR2(rps{Status: waitPod, Partition: 0}), recentLowering(func(r *Recent) {
				r.Partition, r.Status = 3, &v1alpha1.PhasedRolloutStatus{Phase: updated, UpdateRevision: r2, RolloutStartTime: ts(-3600), RolloutEndTime: ts(-3)}
			})),
			want: Decision{Status: &v1alpha1.PhasedRolloutStatus{Phase: updated, UpdateRevision: r2, RolloutStartTime: ts(-3600), RolloutEndTime: ts(-3)}, Partition: 3, TTL: 5 * time.Second,
				Notes: []string{"the StatefulSet observed (generation 4, partition 0) is older than this function's move to partition 3 3s ago: the move is rendered again"}, Reasserted: true},
		},
		"ForgottenAfterTheWindow": {
			reason: "A move 30 s old is not read: the call decides on its snapshot (the step at 2 passes its third check and lowers).",
			in:     input(sts(2), rollingR2(checking(2, 0, 0)), success, recentLowering(func(r *Recent) { r.At = now.Add(-30 * time.Second) })),
			want: Decision{
				Status:    rollingR2(rps{Status: waitPod, Partition: 1}),
				Partition: 1, TTL: 30 * time.Second, Events: []Event{stepDoneEvent("1")},
			},
		},
		"AnotherRevision": {
			reason: "A move of another revision's rollout says nothing of this one.",
			in:     input(sts(2), rollingR2(checking(2, 0, 0)), success, recentLowering(func(r *Recent) { r.UpdateRevision = r3 })),
			want: Decision{
				Status:    rollingR2(rps{Status: waitPod, Partition: 1}),
				Partition: 1, TTL: 30 * time.Second, Events: []Event{stepDoneEvent("1")},
			},
		},
		"TemplateChangedWins": {
			reason: "A new template in this call: every pod is held, whatever was remembered.",
			in:     input(sts(2), rollingR2(checking(2, 0, 0)), templated, recentLowering()),
			want:   Decision{Status: rollingR2(checking(2, 0, 0)), Partition: 3, TTL: 30 * time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Step(tc.in)); diff != "" {
				t.Errorf("%s\nStep(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRemember(t *testing.T) {
	lowered := Step(input(sts(2), rollingR2(checking(2, 0, 0)), success))
	cases := map[string]struct {
		in   Input
		d    Decision
		want *Recent
	}{
		"Lowering": {
			in: input(sts(2), rollingR2(checking(2, 0, 0)), success), d: lowered,
			want: &Recent{At: now, UpdateRevision: r2, Generation: 4, Partition: 1, Status: lowered.Status},
		},
		"Hold":            {in: input(sts(2), rollingR2(checking(2, 0, 0))), d: Decision{Status: rollingR2(checking(2, 0, 0)), Partition: 2}},
		"NeedsACheck":     {in: input(sts(2), rollingR2(checking(2, 0, 0))), d: Decision{Need: NeedCheck, Status: rollingR2(checking(2, 0, 0)), Partition: 1}},
		"TemplateChanged": {in: input(sts(2), rollingR2(checking(2, 0, 0)), templated), d: Decision{Status: rollingR2(checking(2, 0, 0)), Partition: 3}},
		"Standard":        {in: input(sts(2), rollingR2(checking(2, 0, 0)), standard), d: Decision{Status: &v1alpha1.PhasedRolloutStatus{Phase: suspendedPh, UpdateRevision: r2}}},
		"NotObserved":     {in: input(nil, nil), d: Decision{Partition: 3}},
		"Reasserted":      {in: input(sts(2), rollingR2(checking(2, 0, 0)), recentLowering()), d: Decision{Status: loweredTo1, Partition: 1, Reasserted: true}},
		"Completion": {
			in: input(sts(0, func(o *Observed) { o.CurrentRevision = r2 }), rollingR2(rps{Status: waitPod})),
			d:  Decision{Status: &v1alpha1.PhasedRolloutStatus{Phase: updated, UpdateRevision: r2}, Partition: 3},
			want: &Recent{At: now, UpdateRevision: r2, Generation: 4, Partition: 3,
				Status: &v1alpha1.PhasedRolloutStatus{Phase: updated, UpdateRevision: r2}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, ok := Remember(tc.in, tc.d)
			var got *Recent
			if ok {
				got = &r
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(Recent{})); diff != "" {
				t.Errorf("Remember(...): -want, +got:\n%s", diff)
			}
		})
	}
}
