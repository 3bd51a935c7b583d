package phased

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

type stepCase struct {
	reason string
	in     Input
	want   Decision
	// nextNeeds: calling again with the returned status (and no outcome)
	// asks for I/O: a check became due in the step this call started.
	nextNeeds bool
}

var longMessage = strings.Repeat("x", 1000)

func stepCases() map[string]stepCase {
	return map[string]stepCase{
		// Nothing to roll, and the start of a rollout.
		"NothingToRollFirstCall": {
			reason: "A settled StatefulSet with no status yet: updated, partition at replicas, no event, no timer.",
			in:     input(settled(r1), nil),
			want:   Decision{Status: &v1alpha1.PhasedRolloutStatus{Phase: updated, UpdateRevision: r1}, Partition: 3},
		},
		"RolloutStarts": {
			reason: "A new update revision starts a rollout at the top; every pod is available, so the step passes straight to its initial delay.",
			in:     input(sts(3), updatedR1),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitDelay, Partition: 3, AnalysisStartTime: ts(0)}},
				Partition: 3, TTL: 60 * time.Second,
				Events: []Event{{EventNormal, ReasonStarted, "rolling out revision " + r2 + " one pod at a time, from partition 3"}},
			},
		},
		"RolloutStartsNoInitialDelay": {
			reason: "With no initial delay the first check is due in the call that starts the rollout: ask for it, change nothing.",
			in:     input(sts(3), updatedR1, noDelay),
			want:   Decision{Need: NeedCheck, Status: updatedR1, Partition: 3, TTL: time.Second},
		},
		"RolloutStartsWithCheckOutcome": {
			reason: "The second stage of the call above: the rollout starts and the check is folded in.",
			in:     input(sts(3), updatedR1, noDelay, success),
			want: Decision{
				Status: &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(0), RollingPodStatus: &rps{
					Status: waitChecks, Partition: 3, AnalysisStartTime: ts(0), LastCheckTime: ts(0), ConsecutiveSuccessfulChecks: 1, LastCheckMessage: "1 series",
				}},
				Partition: 3, TTL: 30 * time.Second,
				Events: []Event{{EventNormal, ReasonStarted, "rolling out revision " + r2 + " one pod at a time, from partition 3"}},
			},
		},

		// 1. The pod last let go is updated.
		"PreviousPodNotUpdated": {
			reason: "Pod 2 is still on r1: wait for it, on a watch event backed by a 30 s timer.",
			in:     input(sts(2, onRevision(2, r1)), rollingR2(rps{Status: waitPod, Partition: 2})),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 2}), Partition: 2, TTL: 30 * time.Second},
		},
		"PreviousPodMissing": {
			reason: "Pod 2 is being recreated: a missing pod is on no revision.",
			in:     input(sts(2, podGone(2)), rollingR2(rps{Status: waitPod, Partition: 2})),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 2}), Partition: 2, TTL: 30 * time.Second},
		},
		"PreviousPodUpdated": {
			reason: "Pod 2 is on r2 and every pod available: both conditions pass in one call, the initial delay starts now.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 2})),
			want:   Decision{Status: rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0)}), Partition: 2, TTL: 60 * time.Second},
		},

		// 2. Every pod is available.
		"PodUnavailable": {
			reason: "Pod 2 is updated but a pod is not available.",
			in:     input(sts(2, available(2)), rollingR2(rps{Status: waitPod, Partition: 2})),
			want:   Decision{Status: rollingR2(rps{Status: waitAll, Partition: 2}), Partition: 2, TTL: 30 * time.Second},
		},
		"PodUnavailableRestartsAnalysis": {
			reason: "A pod lost mid-analysis sends the step back: the streak and the delay start again, the failure total and message stay.",
			in:     input(sts(2, available(2)), rollingR2(checking(2, 0, 1))),
			want:   Decision{Status: rollingR2(rps{Status: waitAll, Partition: 2, TotalFailedChecks: 1, LastCheckMessage: "1 series"}), Partition: 2, TTL: 30 * time.Second},
		},
		"ObservedReplicasDiffer": {
			reason: "The caller renders 4 replicas, the StatefulSet still has 3: a scale is under way, availability is not reached.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 2}), func(in *Input) { in.Replicas = 4 }),
			want:   Decision{Status: rollingR2(rps{Status: waitAll, Partition: 2}), Partition: 2, TTL: 30 * time.Second},
		},

		// 3. The initial delay.
		"InitialDelayNotPassed": {
			reason: "20 s into a 60 s delay: call again in exactly 40 s.",
			in:     input(sts(2), rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(-20)})),
			want:   Decision{Status: rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(-20)}), Partition: 2, TTL: 40 * time.Second},
		},
		"InitialDelayPassed": {
			reason: "The delay is over and no check has run: ask for one.",
			in:     input(sts(2), rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(-60)})),
			want:   Decision{Need: NeedCheck, Status: rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(-60)}), Partition: 2, TTL: time.Second},
		},
		"InitialDelayPassedCheckFolded": {
			reason: "The second stage: the first success is counted, the next check is a period away.",
			in:     input(sts(2), rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(-60)}), success),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-60), LastCheckTime: ts(0), ConsecutiveSuccessfulChecks: 1, LastCheckMessage: "1 series"}),
				Partition: 2, TTL: 30 * time.Second,
			},
		},

		// 4. The checks.
		"CheckDue": {
			reason: "A period has passed since the last check: ask for the next one.",
			in:     input(sts(2), rollingR2(checking(1, 0, 0))),
			want:   Decision{Need: NeedCheck, Status: rollingR2(checking(1, 0, 0)), Partition: 2, TTL: time.Second},
		},
		"CheckNotDue": {
			reason: "10 s after a check with a 30 s period: call again in 20 s.",
			in:     input(sts(2), rollingR2(lastChecked(checking(1, 0, 0), -10))),
			want:   Decision{Status: rollingR2(lastChecked(checking(1, 0, 0), -10)), Partition: 2, TTL: 20 * time.Second},
		},
		"CheckNotDueOutcomeIgnored": {
			reason: "An outcome given when no check is due is not folded in.",
			in:     input(sts(2), rollingR2(lastChecked(checking(1, 0, 0), -10)), noData),
			want:   Decision{Status: rollingR2(lastChecked(checking(1, 0, 0), -10)), Partition: 2, TTL: 20 * time.Second},
		},
		"SuccessStreakBuilt": {
			reason: "A success adds to the streak; the failure total stays.",
			in:     input(sts(2), rollingR2(checking(1, 0, 2)), success),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveSuccessfulChecks: 2, TotalFailedChecks: 2, LastCheckMessage: "1 series"}),
				Partition: 2, TTL: 30 * time.Second,
			},
		},
		"SuccessEndsFailureStreak": {
			reason: "A success resets the failure streak.",
			in:     input(sts(2), rollingR2(checking(0, 2, 2)), success),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveSuccessfulChecks: 1, TotalFailedChecks: 2, LastCheckMessage: "1 series"}),
				Partition: 2, TTL: 30 * time.Second,
			},
		},
		"StreakBrokenByFailure": {
			reason: "No data is a failure: the streak resets, both failure counts go up, and the first failure of a streak raises a Warning.",
			in:     input(sts(2), rollingR2(checking(2, 0, 2)), noData),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveFailedChecks: 1, TotalFailedChecks: 3, LastCheckMessage: "empty result"}),
				Partition: 2, TTL: 30 * time.Second,
				Events: []Event{{EventWarning, ReasonCheckFailed, "the check at partition 2 returned no data: empty result"}},
			},
		},
		"FailureStreakGoesOn": {
			reason: "A second failure in a row counts, without another event.",
			in:     input(sts(2), rollingR2(checking(0, 1, 3)), noData),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveFailedChecks: 2, TotalFailedChecks: 4, LastCheckMessage: "empty result"}),
				Partition: 2, TTL: 30 * time.Second,
			},
		},
		"ErrorCountsAsFailure": {
			reason: "An error is a failure whatever Succeeded says, and the step reads prometheusError.",
			in:     input(sts(2), rollingR2(checking(2, 0, 2)), promDown),
			want: Decision{
				Status:    rollingR2(rps{Status: promError, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveFailedChecks: 1, TotalFailedChecks: 3, LastCheckMessage: "connection refused"}),
				Partition: 2, TTL: 30 * time.Second,
				Events: []Event{{EventWarning, ReasonCheckFailed, "the check at partition 2 could not be run: connection refused"}},
			},
		},
		"PrometheusErrorKeptUntilNextCheck": {
			reason: "Between checks the step keeps saying the last one errored.",
			in:     input(sts(2), rollingR2(rps{Status: promError, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-10), ConsecutiveFailedChecks: 1, TotalFailedChecks: 3})),
			want: Decision{
				Status:    rollingR2(rps{Status: promError, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-10), ConsecutiveFailedChecks: 1, TotalFailedChecks: 3}),
				Partition: 2, TTL: 20 * time.Second,
			},
		},
		"PrometheusErrorRecovers": {
			reason: "A success after an error: back to waitForChecks.",
			in:     input(sts(2), rollingR2(rps{Status: promError, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-30), ConsecutiveFailedChecks: 1, TotalFailedChecks: 3}), success),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveSuccessfulChecks: 1, TotalFailedChecks: 3, LastCheckMessage: "1 series"}),
				Partition: 2, TTL: 30 * time.Second,
			},
		},
		"ThresholdReachedLowers": {
			reason: "The third success in a row lowers the partition in the same call; the next step waits for pod 1.",
			in:     input(sts(2), rollingR2(checking(2, 0, 1)), success),
			want: Decision{
				Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 1, TTL: 30 * time.Second,
				Events: []Event{stepDoneEvent("1")},
			},
		},
		"ThresholdReachedNextPodAlreadyUpdated": {
			reason: "Pod 1 is already on r2: the new step passes its first conditions in the same call, but never lowers again.",
			in:     input(sts(2, onRevision(1, r2)), rollingR2(checking(2, 0, 1)), success),
			want: Decision{
				Status: rollingR2(rps{Status: waitDelay, Partition: 1, AnalysisStartTime: ts(0)}), Partition: 1, TTL: 60 * time.Second,
				Events: []Event{stepDoneEvent("1")},
			},
		},
		"ThresholdReachedNextStepCheckDue": {
			reason: "With no delay the new step's first check is due at once; its outcome belongs to the next call.",
			in:     input(sts(2, onRevision(1, r2)), rollingR2(checking(2, 0, 1)), success, noDelay),
			want: Decision{
				Status: rollingR2(rps{Status: waitChecks, Partition: 1, AnalysisStartTime: ts(0)}), Partition: 1, TTL: time.Second,
				Events: []Event{stepDoneEvent("1")},
			},
			nextNeeds: true,
		},

		// Partition 0.
		"PartitionZeroWaitsForController": {
			reason: "Every pod is let go and on r2: the StatefulSet controller has yet to declare r2 current.",
			in:     input(sts(0), rollingR2(rps{Status: waitPod, Partition: 0})),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 0}), Partition: 0, TTL: 30 * time.Second},
		},
		"PartitionZeroPodUnavailable": {
			reason: "Pod 0 is updated but not yet available.",
			in:     input(sts(0, available(2)), rollingR2(rps{Status: waitPod, Partition: 0})),
			want:   Decision{Status: rollingR2(rps{Status: waitAll, Partition: 0}), Partition: 0, TTL: 30 * time.Second},
		},

		// Updated.
		"RolloutCompletes": {
			reason: "r2 is current: updated, the end stamped, the step cleared, the partition back at replicas, no timer.",
			in:     input(settled(r2), rollingR2(rps{Status: waitPod, Partition: 0})),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: updated, UpdateRevision: r2, RolloutStartTime: ts(-3600), RolloutEndTime: ts(0)},
				Partition: 3,
				Events:    []Event{{EventNormal, ReasonCompleted, "every pod runs revision " + r2}},
			},
		},
		"UpdatedStaysUpdated": {
			reason: "Nothing changes, nothing is said.",
			in:     input(settled(r1), updatedR1),
			want:   Decision{Status: updatedR1, Partition: 3},
		},
		"RevertMidRollout": {
			reason: "The template went back to r1 mid-rollout: the revisions are equal but pod 2 still runs r2, so r1 is rolled back out from the top.",
			in:     input(sts(2, func(o *Observed) { o.UpdateRevision, o.UpdatedReplicas = r1, 2 }), rollingR2(checking(1, 0, 0))),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r1, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitDelay, Partition: 3, AnalysisStartTime: ts(0)}},
				Partition: 3, TTL: 60 * time.Second,
				Events: []Event{{EventNormal, ReasonRestarted, "revision " + r1 + " replaces " + r2 + " mid-rollout: the rollout starts again from partition 3"}},
			},
		},

		// standardRollingUpdate.
		"StandardRollingUpdateSuspends": {
			reason: "The StatefulSet controller takes over: partition 0, suspended, the step cleared.",
			in:     input(sts(2), rollingR2(checking(1, 0, 0)), standard),
			want: Decision{
				Status: &v1alpha1.PhasedRolloutStatus{Phase: suspendedPh, UpdateRevision: r2, RolloutStartTime: ts(-3600)},
				Events: []Event{{EventNormal, ReasonSuspended, "standardRollingUpdate is true: the StatefulSet controller rolls every pod on its own"}},
			},
		},
		"StaysSuspended": {
			reason: "Already suspended: no event.",
			in:     input(sts(1), &v1alpha1.PhasedRolloutStatus{Phase: suspendedPh, UpdateRevision: r2}, standard),
			want:   Decision{Status: &v1alpha1.PhasedRolloutStatus{Phase: suspendedPh, UpdateRevision: r2}},
		},
		"SuspendedAboveTemplateGuard": {
			reason: "With standardRollingUpdate an uncontrolled rollout of the new template is what was asked for.",
			in:     input(settled(r1), &v1alpha1.PhasedRolloutStatus{Phase: suspendedPh, UpdateRevision: r1}, standard, templated),
			want:   Decision{Status: &v1alpha1.PhasedRolloutStatus{Phase: suspendedPh, UpdateRevision: r1}},
		},
		"LeavingStandardRollingUpdateMidRollout": {
			reason: "The controller had moved pods 2 and 1: the rollout resumes below them, raising the partition from 0 to 1.",
			in:     input(sts(1, partitionAt(0)), &v1alpha1.PhasedRolloutStatus{Phase: suspendedPh, UpdateRevision: r2, RolloutStartTime: ts(-3600)}),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitDelay, Partition: 1, AnalysisStartTime: ts(0)}},
				Partition: 1, TTL: 60 * time.Second,
				Events: []Event{{EventNormal, ReasonStarted, "rolling out revision " + r2 + " one pod at a time, from partition 1"}},
			},
		},
		"LeavingStandardRollingUpdatePodBeingReplaced": {
			reason: "Pod 1 is being recreated by the controller: the partition holds it (at 2) and waits for availability.",
			in:     input(sts(1, partitionAt(0), podGone(1)), &v1alpha1.PhasedRolloutStatus{Phase: suspendedPh, UpdateRevision: r2}),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitAll, Partition: 2}},
				Partition: 2, TTL: 30 * time.Second,
				Events: []Event{{EventNormal, ReasonStarted, "rolling out revision " + r2 + " one pod at a time, from partition 2"}},
			},
		},

		// A new revision mid-rollout.
		"NewRevisionMidRollout": {
			reason: "r3 replaces r2 at partition 1: the procedure restarts from the top, rolloutStartTime reset.",
			in:     input(sts(1, partitionAt(3), func(o *Observed) { o.UpdateRevision, o.UpdatedReplicas = r3, 0 }), rollingR2(rps{Status: waitChecks, Partition: 1, AnalysisStartTime: ts(-300), ConsecutiveSuccessfulChecks: 2})),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r3, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitDelay, Partition: 3, AnalysisStartTime: ts(0)}},
				Partition: 3, TTL: 60 * time.Second,
				Events: []Event{{EventNormal, ReasonRestarted, "revision " + r3 + " replaces " + r2 + " mid-rollout: the rollout starts again from partition 3"}},
			},
		},
		"NewRevisionMidRolloutPartitionNotRaised": {
			reason: "The template changed behind the function's back (partition still 1): the restart raises it to the top at once.",
			in:     input(sts(1, func(o *Observed) { o.UpdateRevision, o.UpdatedReplicas = r3, 0 }), rollingR2(rps{Status: waitChecks, Partition: 1, AnalysisStartTime: ts(-300), ConsecutiveSuccessfulChecks: 2})),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r3, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitDelay, Partition: 3, AnalysisStartTime: ts(0)}},
				Partition: 3, TTL: 60 * time.Second,
				Events: []Event{{EventNormal, ReasonRestarted, "revision " + r3 + " replaces " + r2 + " mid-rollout: the rollout starts again from partition 3"}},
			},
		},

		// The template guard.
		"TemplateChangedHoldsEveryPod": {
			reason: "This call's apply creates a revision: the same apply holds every pod; the status waits for the new revision.",
			in:     input(sts(1), rollingR2(rps{Status: waitPod, Partition: 1}), templated),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 3, TTL: 30 * time.Second},
		},
		"TemplateChangedWhileUpdated": {
			reason: "The first edit after a rollout: partition at replicas, as it already was.",
			in:     input(settled(r1), updatedR1, templated),
			want:   Decision{Status: updatedR1, Partition: 3, TTL: 30 * time.Second},
		},

		// A stale StatefulSet status.
		"StaleStatus": {
			reason: "status.observedGeneration lags: keep the partition, change nothing (a check outcome is not folded), call again in 5 s.",
			in:     input(sts(2, func(o *Observed) { o.Generation = 5 }), rollingR2(checking(2, 0, 0)), success),
			want:   Decision{Status: rollingR2(checking(2, 0, 0)), Partition: 2, TTL: 5 * time.Second},
		},
		"StaleAfterTemplateGuard": {
			reason: "The guard's apply is not yet observed by the controller: the partition it set (replicas) is kept, not the status's 1.",
			in:     input(sts(1, partitionAt(3), func(o *Observed) { o.Generation = 5 }), rollingR2(rps{Status: waitPod, Partition: 1})),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 3, TTL: 5 * time.Second},
		},

		// Not created.
		"NotCreated": {
			reason: "No StatefulSet yet: partition at replicas, no status.",
			in:     input(nil, nil),
			want:   Decision{Partition: 3, TTL: 30 * time.Second},
		},
		"NotCreatedKeepsStatus": {
			reason: "No StatefulSet observed: the status is kept as it is.",
			in:     input(nil, updatedR1),
			want:   Decision{Status: updatedR1, Partition: 3, TTL: 30 * time.Second},
		},

		// No check configured.
		"UncheckedStartLowers": {
			reason: "Without a check a rollout starts and lets the top pod go at once: no initial delay, no query, the garbage timings not even read.",
			in:     input(sts(3), updatedR1, unchecked),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitPod, Partition: 2}},
				Partition: 2, TTL: 30 * time.Second,
				Events: []Event{{EventNormal, ReasonStarted, "rolling out revision " + r2 + " one pod at a time, from partition 3"}, stepDoneEvent("2")},
			},
		},
		"UncheckedWaitsForAvailability": {
			reason: "Without a check a step still waits for every pod to be available.",
			in:     input(sts(2, available(2)), rollingR2(rps{Status: waitPod, Partition: 2}), unchecked),
			want:   Decision{Status: rollingR2(rps{Status: v1alpha1.RollingPodWaitForAllPodsToBeAvailable, Partition: 2}), Partition: 2, TTL: 30 * time.Second},
		},
		"UncheckedDrainGated": {
			reason: "Without a check the drain gate still holds the partition above a pod that serves.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 2}), unchecked, gate(&DrainOutcome{Ordinal: 1})),
			want:   Decision{Status: rollingR2(rps{Status: waitDrain, Partition: 2}), Partition: 2, TTL: 10 * time.Second},
		},

		// The drain gate.
		"DrainAsked": {
			reason: "The checks passed: before lowering onto pod 1, ask whether it has drained; nothing else changes.",
			in:     input(sts(2), rollingR2(checking(2, 0, 0)), success, gate(nil)),
			want:   Decision{Need: NeedDrain, DrainOrdinal: 1, Status: rollingR2(checking(2, 0, 0)), Partition: 2, TTL: time.Second},
		},
		"DrainNotDrained": {
			reason: "Pod 1 still serves: waitForDrain, the success streak kept, retried after the drain interval.",
			in:     input(sts(2), rollingR2(checking(2, 0, 0)), success, gate(&DrainOutcome{Ordinal: 1})),
			want: Decision{
				Status:    rollingR2(rps{Status: waitDrain, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveSuccessfulChecks: 3, LastCheckMessage: "1 series"}),
				Partition: 2, TTL: 10 * time.Second,
			},
		},
		"DrainStillNotDrained": {
			reason: "No check runs while waiting for the drain.",
			in:     input(sts(2), rollingR2(draining()), gate(&DrainOutcome{Ordinal: 1})),
			want:   Decision{Status: rollingR2(draining()), Partition: 2, TTL: 10 * time.Second},
		},
		"DrainAskedAgain": {
			reason: "The interval is up: ask for another probe.",
			in:     input(sts(2), rollingR2(draining()), gate(nil)),
			want:   Decision{Need: NeedDrain, DrainOrdinal: 1, Status: rollingR2(draining()), Partition: 2, TTL: time.Second},
		},
		"DrainOutcomeForAnotherPod": {
			reason: "An outcome for pod 0 says nothing about pod 1.",
			in:     input(sts(2), rollingR2(draining()), gate(&DrainOutcome{Ordinal: 0, Drained: true})),
			want:   Decision{Need: NeedDrain, DrainOrdinal: 1, Status: rollingR2(draining()), Partition: 2, TTL: time.Second},
		},
		"DrainDrained": {
			reason: "Pod 1 has drained: lower the partition onto it.",
			in:     input(sts(2), rollingR2(draining()), gate(&DrainOutcome{Ordinal: 1, Drained: true})),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 1, TTL: 30 * time.Second, Events: []Event{stepDoneEvent("1")}},
		},
		"DrainDisabled": {
			reason: "The gate was turned off while waiting for a drain: the streak stands, the partition is lowered.",
			in:     input(sts(2), rollingR2(draining())),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 1, TTL: 30 * time.Second, Events: []Event{stepDoneEvent("1")}},
		},
		"DrainIntervalBounded": {
			reason: "A zero interval is raised to the 1 s minimum.",
			in:     input(sts(2), rollingR2(draining()), func(in *Input) { in.Drain = &DrainGate{Outcome: &DrainOutcome{Ordinal: 1}} }),
			want:   Decision{Status: rollingR2(draining()), Partition: 2, TTL: time.Second},
		},

		// A lowering the status records but the StatefulSet does not hold.
		"UnappliedLoweringRegated": {
			reason: "The status let pod 1 go, the StatefulSet holds partition 2 (a later call raised it, its status lost): pod 1 must drain again first.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 1}), gate(nil)),
			want:   Decision{Need: NeedDrain, DrainOrdinal: 1, Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 2, TTL: time.Second},
		},
		"UnappliedLoweringNotDrained": {
			reason: "Pod 1 serves: the observed partition is kept, the status too, the probe retried after the drain interval.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 1}), gate(&DrainOutcome{Ordinal: 1})),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 2, TTL: 10 * time.Second},
		},
		"UnappliedLoweringOutcomeForAnotherPod": {
			reason: "A verdict for pod 0 says nothing of pod 1.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 1}), gate(&DrainOutcome{Ordinal: 0, Drained: true})),
			want:   Decision{Need: NeedDrain, DrainOrdinal: 1, Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 2, TTL: time.Second},
		},
		"UnappliedLoweringDrained": {
			reason: "Pod 1 has drained again: the lowering is rendered, and the step waits for pod 1 to be updated.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 1}), gate(&DrainOutcome{Ordinal: 1, Drained: true})),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 1, TTL: 30 * time.Second},
		},
		"UnappliedLoweringDrainedPodUpdated": {
			reason: "Pod 1 drained and already on r2 (a caller that observes it): the lowering is rendered and the step goes on only as far as it can without outcomes, no second probe asked for.",
			in:     input(sts(2, onRevision(1, r2)), rollingR2(rps{Status: waitPod, Partition: 1}), gate(&DrainOutcome{Ordinal: 1, Drained: true})),
			want:   Decision{Status: rollingR2(rps{Status: waitDelay, Partition: 1, AnalysisStartTime: ts(0)}), Partition: 1, TTL: 60 * time.Second},
		},
		"UnappliedLoweringToZero": {
			reason: "The last lowering, recorded but not held: pod 0 is probed again too.",
			in:     input(sts(1), rollingR2(rps{Status: waitPod, Partition: 0}), gate(nil)),
			want:   Decision{Need: NeedDrain, DrainOrdinal: 0, Status: rollingR2(rps{Status: waitPod, Partition: 0}), Partition: 1, TTL: time.Second},
		},
		"UnappliedLoweringUngated": {
			reason: "Without a drain gate the recorded lowering is applied again as it is (the checks vouched for it).",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 1})),
			want:   Decision{Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 1, TTL: 30 * time.Second},
		},
		// Hostile statuses.
		"UnparsableTimestamps": {
			reason: "Times that do not parse are unset: the rollout start becomes now, the analysis starts again.",
			in: input(sts(2), &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: "yesterday", RollingPodStatus: &rps{
				Status: waitChecks, Partition: 2, AnalysisStartTime: "soon", LastCheckTime: ts(-10), ConsecutiveSuccessfulChecks: 2,
			}}),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0)}},
				Partition: 2, TTL: 60 * time.Second,
				Notes: []string{
					`rolloutStartTime "yesterday" is not an RFC 3339 time: treated as unset`,
					`rollingPodStatus.analysisStartTime "soon" is not an RFC 3339 time: treated as unset`,
				},
			},
		},
		"FutureTimestamps": {
			reason: "An analysis start an hour ahead would hold the step an hour longer: it is now.",
			in:     input(sts(2), rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(3600), LastCheckTime: ts(600), ConsecutiveSuccessfulChecks: 1})),
			want: Decision{
				Status:    rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0), LastCheckTime: ts(0), ConsecutiveSuccessfulChecks: 1}),
				Partition: 2, TTL: 60 * time.Second,
				Notes: []string{
					"rollingPodStatus.analysisStartTime 2026-11-24T13:00:00Z is in the future: treated as now",
					"rollingPodStatus.lastCheckTime 2026-11-24T12:10:00Z is in the future: treated as now",
				},
			},
		},
		"PartitionAboveReplicas": {
			reason: "A partition above replicas restarts the step where the StatefulSet holds it.",
			in:     input(sts(2), rollingR2(rps{Status: waitChecks, Partition: 7, ConsecutiveSuccessfulChecks: 2, TotalFailedChecks: 4, LastCheckMessage: "1 series"})),
			want: Decision{
				Status:    rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0), TotalFailedChecks: 4, LastCheckMessage: "1 series"}),
				Partition: 2, TTL: 60 * time.Second,
				Notes: []string{"rollingPodStatus.partition 7 is outside [1, 3]: the step starts again at partition 2"},
			},
		},
		"NegativePartition": {
			reason: "A negative partition would let every pod roll: the step restarts where the StatefulSet holds it.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: -1})),
			want: Decision{
				Status:    rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0)}),
				Partition: 2, TTL: 60 * time.Second,
				Notes: []string{"rollingPodStatus.partition -1 is outside [1, 3]: the step starts again at partition 2"},
			},
		},
		"PartitionFarBelowObserved": {
			reason: "Partition 0 in status while the StatefulSet holds 2: no call of Step wrote that, and it would roll two pods at once.",
			in:     input(sts(2), rollingR2(rps{Status: waitPod, Partition: 0})),
			want: Decision{
				Status:    rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0)}),
				Partition: 2, TTL: 60 * time.Second,
				Notes: []string{"rollingPodStatus.partition 0 is outside [1, 3]: the step starts again at partition 2"},
			},
		},
		"NegativeCounters": {
			reason: "Negative counters are 0.",
			in:     input(sts(2), rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-10), ConsecutiveSuccessfulChecks: -5, ConsecutiveFailedChecks: -1, TotalFailedChecks: -3})),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-10)}),
				Partition: 2, TTL: 20 * time.Second,
				Notes: []string{
					"rollingPodStatus.consecutiveSuccessfulChecks -5 is negative: treated as 0",
					"rollingPodStatus.consecutiveFailedChecks -1 is negative: treated as 0",
					"rollingPodStatus.totalFailedChecks -3 is negative: treated as 0",
				},
			},
		},
		"CountersSaturate": {
			reason: "Counters at their maximum stay there instead of wrapping negative.",
			in:     input(sts(2), rollingR2(checking(0, math.MaxInt32, math.MaxInt32)), noData),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveFailedChecks: math.MaxInt32, TotalFailedChecks: math.MaxInt32, LastCheckMessage: "empty result"}),
				Partition: 2, TTL: 30 * time.Second,
			},
		},
		"UnknownPhase": {
			reason: "An unknown phase is unset: the rollout of r2 starts, from the partition the StatefulSet holds.",
			in:     input(sts(2), &v1alpha1.PhasedRolloutStatus{Phase: "exploded", UpdateRevision: r2, RollingPodStatus: &rps{Status: waitChecks, Partition: 2}}),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0)}},
				Partition: 2, TTL: 60 * time.Second,
				Events: []Event{{EventNormal, ReasonStarted, "rolling out revision " + r2 + " one pod at a time, from partition 2"}},
				Notes:  []string{`phase "exploded" is unknown: treated as unset`},
			},
		},
		"UnknownStepStatus": {
			reason: "An unknown step status is worked out again.",
			in:     input(sts(2), rollingR2(rps{Status: "dancing", Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-10), ConsecutiveSuccessfulChecks: 1})),
			want: Decision{
				Status:    rollingR2(rps{Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-10), ConsecutiveSuccessfulChecks: 1}),
				Partition: 2, TTL: 20 * time.Second,
				Notes: []string{`rollingPodStatus.status "dancing" is unknown: treated as unset`},
			},
		},
		"RollingWithoutStep": {
			reason: "Rolling with no step: the step starts again where the StatefulSet holds the partition, without an event.",
			in:     input(sts(2), &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(-3600)}),
			want: Decision{
				Status:    rollingR2(rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0)}),
				Partition: 2, TTL: 60 * time.Second,
				Notes: []string{"the rolling status has no rollingPodStatus: the step starts again at partition 2"},
			},
		},
		"OverlongRevision": {
			reason: "A revision longer than any object name is unset: the rollout of r2 starts rather than restarts.",
			in:     input(sts(2), &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: strings.Repeat("r", 300), RollingPodStatus: &rps{Partition: 2}}),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitDelay, Partition: 2, AnalysisStartTime: ts(0)}},
				Partition: 2, TTL: 60 * time.Second,
				Events: []Event{{EventNormal, ReasonStarted, "rolling out revision " + r2 + " one pod at a time, from partition 2"}},
				Notes:  []string{"updateRevision is longer than any revision name: treated as unset"},
			},
		},
		"OverlongCheckMessage": {
			reason: "A long Prometheus error is clipped in status and event.",
			in:     input(sts(2), rollingR2(checking(0, 0, 0)), outcome(Outcome{Err: true, Message: longMessage})),
			want: Decision{
				Status:    rollingR2(rps{Status: promError, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(0), ConsecutiveFailedChecks: 1, TotalFailedChecks: 1, LastCheckMessage: longMessage[:253] + "…"}),
				Partition: 2, TTL: 30 * time.Second,
				Events: []Event{{EventWarning, ReasonCheckFailed, "the check at partition 2 could not be run: " + longMessage[:253] + "…"}},
			},
		},
		"HugeReplicasUnknownRevision": {
			reason: "An unknown update revision matches no pod, so the search for pods already updated stops at the first missing one instead of walking 2^31 ordinals.",
			in:     input(sts(3, func(o *Observed) { o.UpdateRevision = "" }), nil, func(in *Input) { in.Replicas = math.MaxInt32 }),
			want: Decision{
				Status:    &v1alpha1.PhasedRolloutStatus{Phase: rolling, RolloutStartTime: ts(0), RollingPodStatus: &rps{Status: waitAll, Partition: math.MaxInt32}},
				Partition: math.MaxInt32, TTL: 30 * time.Second,
				Events: []Event{{EventNormal, ReasonStarted, "rolling out revision  one pod at a time, from partition 2147483647"}},
			},
		},
		"NegativeReplicas": {
			reason: "Negative replicas are 0.",
			in:     input(nil, nil, func(in *Input) { in.Replicas = -2 }),
			want:   Decision{TTL: 30 * time.Second},
		},
		"CheckTimingsOutOfRange": {
			reason: "Timings outside the schema's bounds are brought inside: a threshold of 1 lowers on the first success.",
			in: input(sts(2), rollingR2(checking(0, 0, 0)), success, func(in *Input) {
				in.Check = v1alpha1.RolloutCheck{InitialDelaySeconds: -5, PeriodSeconds: 0, SuccessThreshold: 0}
			}),
			want: Decision{
				Status: rollingR2(rps{Status: waitPod, Partition: 1}), Partition: 1, TTL: 30 * time.Second,
				Events: []Event{stepDoneEvent("1")},
				Notes: []string{
					"check.initialDelaySeconds -5 is outside [0, 86400]: 0 used",
					"check.periodSeconds 0 is outside [1, 3600]: 1 used",
					"check.successThreshold 0 is outside [1, 100]: 1 used",
				},
			},
		},
	}
}

// draining is a step at partition 2 whose checks passed, waiting for pod
// 1 to drain.
func draining() rps {
	return rps{Status: waitDrain, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-40), ConsecutiveSuccessfulChecks: 3, LastCheckMessage: "1 series"}
}

func lastChecked(p rps, sec int) rps { p.LastCheckTime = ts(sec); return p }

func TestStep(t *testing.T) {
	for name, tc := range stepCases() {
		t.Run(name, func(t *testing.T) {
			got := Step(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nStep(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestStepIdempotent calls Step again with each final decision's status:
// the same partition, status and TTL must come back, with no event and no
// repair (the status Step writes is one it reads back as it is).
func TestStepIdempotent(t *testing.T) {
	for name, tc := range stepCases() {
		if tc.want.Need != NeedNothing {
			continue
		}
		t.Run(name, func(t *testing.T) {
			first := Step(tc.in)
			if _, notes := Decode(first.Status, tc.in.Now); len(notes) > 0 {
				t.Errorf("Decode(Step(...).Status) repaired the status Step wrote: %q", notes)
			}
			again := tc.in
			again.Previous = first.Status
			got := Step(again)
			if tc.nextNeeds {
				// Without this call's outcome, which was for the step it
				// finished.
				again.CheckOutcome = nil
				if got = Step(again); got.Need == NeedNothing {
					t.Errorf("the second call needs no I/O; the row says it does")
				}
				return
			}
			want := first
			want.Events = nil
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Decision{}, "Notes")); diff != "" {
				t.Errorf("%s\nStep(...) again with its own status: -first, +again:\n%s", tc.reason, diff)
			}
		})
	}
}
