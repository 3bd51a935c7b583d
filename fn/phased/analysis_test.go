package phased

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

func TestAnalyze(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	ts := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	check := v1alpha1.RolloutCheck{InitialDelaySeconds: 30, PeriodSeconds: 10, SuccessThreshold: 2}
	ok := &Outcome{Succeeded: true, Message: "returned 1 series"}
	none := &Outcome{Message: "returned no data"}
	cases := map[string]struct {
		in   AnalysisInput
		want AnalysisDecision
	}{
		"PodsNotReady": {
			in: AnalysisInput{Generation: 4, Ready: false,
				Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), ConsecutiveSuccessfulChecks: 1, TotalFailedChecks: 2, LastCheckMessage: "x"}},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForAllPodsToBeAvailable, TotalFailedChecks: 2, LastCheckMessage: "x"}, TTL: ttlWatch},
		},
		"ReadyStartsTheInitialDelay": {
			in:   AnalysisInput{Generation: 4, Ready: true},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(0)}, TTL: 30 * time.Second},
		},
		"AnotherGenerationsAnalysisStartsOver": {
			in:   AnalysisInput{Generation: 5, Ready: true, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Passed: true, ConsecutiveSuccessfulChecks: 2}},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 5, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(0)}, TTL: 30 * time.Second},
		},
		"InitialDelayNotPassed": {
			in:   AnalysisInput{Generation: 4, Ready: true, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(-20 * time.Second)}},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(-20 * time.Second)}, TTL: 10 * time.Second},
		},
		"CheckDueAsksForIt": {
			in: AnalysisInput{Generation: 4, Ready: true, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(-30 * time.Second)}},
			want: AnalysisDecision{Need: NeedCheck,
				Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(-30 * time.Second)}, TTL: ttlNeed},
		},
		"FirstSuccess": {
			in: AnalysisInput{Generation: 4, Ready: true, CheckOutcome: ok, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(-30 * time.Second)}},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-30 * time.Second), LastCheckTime: ts(0),
				ConsecutiveSuccessfulChecks: 1, LastCheckMessage: "returned 1 series"}, TTL: 10 * time.Second},
		},
		"CheckNotDue": {
			in:   AnalysisInput{Generation: 4, Ready: true, CheckOutcome: ok, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), LastCheckTime: ts(-4 * time.Second), ConsecutiveSuccessfulChecks: 1}},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), LastCheckTime: ts(-4 * time.Second), ConsecutiveSuccessfulChecks: 1}, TTL: 6 * time.Second},
		},
		"ThresholdReachedPasses": {
			in: AnalysisInput{Generation: 4, Ready: true, CheckOutcome: ok, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), LastCheckTime: ts(-10 * time.Second), ConsecutiveSuccessfulChecks: 1}},
			want: AnalysisDecision{Passed: true, Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, Passed: true, AnalysisStartTime: ts(-time.Minute), LastCheckTime: ts(0),
				ConsecutiveSuccessfulChecks: 2, LastCheckMessage: "returned 1 series"}},
		},
		"FailureBreaksTheStreakWithAnEvent": {
			in: AnalysisInput{Generation: 4, Ready: true, CheckOutcome: none, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), LastCheckTime: ts(-10 * time.Second), ConsecutiveSuccessfulChecks: 1}},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), LastCheckTime: ts(0),
				ConsecutiveFailedChecks: 1, TotalFailedChecks: 1, LastCheckMessage: "returned no data"}, TTL: 10 * time.Second,
				Events: []Event{{EventWarning, ReasonAnalysisFailed, "the analysis of generation 4: returned no data"}}},
		},
		"ErrorCountsAsFailure": {
			in: AnalysisInput{Generation: 4, Ready: true, CheckOutcome: &Outcome{Err: true, Message: "timed out after 10s"}, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), LastCheckTime: ts(-10 * time.Second), ConsecutiveFailedChecks: 1, TotalFailedChecks: 1}},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodPrometheusError, AnalysisStartTime: ts(-time.Minute), LastCheckTime: ts(0),
				ConsecutiveFailedChecks: 2, TotalFailedChecks: 2, LastCheckMessage: "timed out after 10s"}, TTL: 10 * time.Second},
		},
		"PassedStaysPassed": {
			in:   AnalysisInput{Generation: 4, Ready: true, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Passed: true, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), ConsecutiveSuccessfulChecks: 2}},
			want: AnalysisDecision{Passed: true, Status: &v1alpha1.AnalysisStatus{Generation: 4, Passed: true, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute), ConsecutiveSuccessfulChecks: 2}},
		},
		"ForgedPassedWithoutTheStreak": {
			in:   AnalysisInput{Generation: 4, Ready: true, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Passed: true, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute)}},
			want: AnalysisDecision{Need: NeedCheck, Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForChecks, AnalysisStartTime: ts(-time.Minute)}, TTL: ttlNeed},
		},
		"FutureStartIsNow": {
			in: AnalysisInput{Generation: 4, Ready: true, Previous: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(time.Hour)}},
			want: AnalysisDecision{Status: &v1alpha1.AnalysisStatus{Generation: 4, Status: v1alpha1.RollingPodWaitForInitialDelay, AnalysisStartTime: ts(0)}, TTL: 30 * time.Second,
				Notes: []string{"rollingPodStatus.analysisStartTime " + ts(time.Hour) + " is in the future: treated as now"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.in.Now, tc.in.Check = now, check
			got := Analyze(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Analyze (-want +got):\n%s", diff)
			}
		})
	}
}
