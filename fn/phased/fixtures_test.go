package phased

import (
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// now is the time of every call in the tables; ts(n) is n seconds from it.
var now = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func ts(sec int) string { return now.Add(time.Duration(sec) * time.Second).Format(time.RFC3339) }

// Revisions: r1 is current, r2 the one being rolled out, r3 a later edit.
const (
	r1 = "db-7c9f5d6b8"
	r2 = "db-5f8b7c9d4"
	r3 = "db-6d4c8b9f7"
)

// check is the check block of the tables: a minute's delay, a check every
// 30 s, three in a row.
var check = v1alpha1.RolloutCheck{
	InitialDelaySeconds: 60, PeriodSeconds: 30, SuccessThreshold: 3,
	Query: v1alpha1.PrometheusQuery{Expr: "sum(firebolt_running_queries) < 1", URL: "http://prometheus:9090"},
}

type rps = v1alpha1.RollingPodStatus

const (
	waitPod     = v1alpha1.RollingPodWaitForPodToBeUpdated
	waitAll     = v1alpha1.RollingPodWaitForAllPodsToBeAvailable
	waitDelay   = v1alpha1.RollingPodWaitForInitialDelay
	waitChecks  = v1alpha1.RollingPodWaitForChecks
	waitDrain   = v1alpha1.RollingPodWaitForDrain
	promError   = v1alpha1.RollingPodPrometheusError
	rolling     = v1alpha1.PhasedRolloutRolling
	updated     = v1alpha1.PhasedRolloutUpdated
	suspendedPh = v1alpha1.PhasedRolloutSuspended
)

func ptr[T any](v T) *T { return &v }

// sts is a StatefulSet of three pods rolling r1 to r2 at partition p:
// pods at and above p are on r2, all available, its status up to date.
func sts(p int32, mods ...func(*Observed)) *Observed {
	o := &Observed{
		Generation: 4, ObservedGeneration: 4, SpecReplicas: 3, Partition: ptr(p),
		Replicas: 3, AvailableReplicas: 3, CurrentRevision: r1, UpdateRevision: r2,
		PodRevisions: map[int32]string{},
	}
	for i := range int32(3) {
		o.PodRevisions[i] = r1
		if i >= p {
			o.PodRevisions[i] = r2
			o.UpdatedReplicas++
		}
	}
	for _, m := range mods {
		m(o)
	}
	return o
}

// settled is a StatefulSet of three pods all on rev, which is current.
func settled(rev string) *Observed {
	return sts(3, func(o *Observed) {
		o.CurrentRevision, o.UpdateRevision, o.UpdatedReplicas = rev, rev, 3
		o.PodRevisions = map[int32]string{0: rev, 1: rev, 2: rev}
	})
}

func onRevision(ordinal int32, rev string) func(*Observed) {
	return func(o *Observed) { o.PodRevisions[ordinal] = rev }
}

func podGone(ordinal int32) func(*Observed) {
	return func(o *Observed) { delete(o.PodRevisions, ordinal); o.AvailableReplicas-- }
}

func available(n int32) func(*Observed) { return func(o *Observed) { o.AvailableReplicas = n } }

func partitionAt(p int32) func(*Observed) { return func(o *Observed) { o.Partition = ptr(p) } }

// input is a call at now rendering three replicas with the table's check.
func input(obs *Observed, prev *v1alpha1.PhasedRolloutStatus, mods ...func(*Input)) Input {
	in := Input{Now: now, Replicas: 3, Check: check, Observed: obs, Previous: prev}
	for _, m := range mods {
		m(&in)
	}
	return in
}

func outcome(o Outcome) func(*Input) { return func(in *Input) { in.CheckOutcome = &o } }

var (
	success   = outcome(Outcome{Succeeded: true, Message: "1 series"})
	noData    = outcome(Outcome{Message: "empty result"})
	promDown  = outcome(Outcome{Succeeded: true, Err: true, Message: "connection refused"})
	noDelay   = func(in *Input) { in.Check.InitialDelaySeconds = 0 }
	standard  = func(in *Input) { in.StandardRollingUpdate = true }
	templated = func(in *Input) { in.TemplateChanged = true }
	// unchecked is a call without a check block, its timings garbage.
	unchecked = func(in *Input) { in.Unchecked, in.Check = true, v1alpha1.RolloutCheck{PeriodSeconds: -5} }
)

// gate is the drain gate with a 10 s interval and the given outcome.
func gate(out *DrainOutcome) func(*Input) {
	return func(in *Input) { in.Drain = &DrainGate{Interval: 10 * time.Second, Outcome: out} }
}

// rollingR2 is the status of a rollout of r2 started an hour ago, at step
// pod.
func rollingR2(pod rps) *v1alpha1.PhasedRolloutStatus {
	return &v1alpha1.PhasedRolloutStatus{Phase: rolling, UpdateRevision: r2, RolloutStartTime: ts(-3600), RollingPodStatus: &pod}
}

// updatedR1 is the status of a rollout of r1 finished a day ago.
var updatedR1 = &v1alpha1.PhasedRolloutStatus{Phase: updated, UpdateRevision: r1, RolloutStartTime: ts(-90000), RolloutEndTime: ts(-86400)}

// checking is a step at partition 2 whose analysis started 5 minutes ago,
// last checked 30 s ago (a check is due).
func checking(successes, failures, total int32) rps {
	return rps{
		Status: waitChecks, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-30),
		ConsecutiveSuccessfulChecks: successes, ConsecutiveFailedChecks: failures, TotalFailedChecks: total, LastCheckMessage: "1 series",
	}
}

func stepDoneEvent(ordinal string) Event {
	return Event{EventNormal, ReasonStepDone, "the checks passed: partition lowered to " + ordinal + ", pod ordinal " + ordinal + " moves to revision " + r2}
}
