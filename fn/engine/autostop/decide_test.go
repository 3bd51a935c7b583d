package autostop

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// now is a Monday noon; the decisions' stamps are this time.
var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) *time.Time { t := now.Add(-d); return &t }

func i32(v int32) *int32 { return &v }

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// enabled is an enabled autoStop with activeReplicas 3 and the schema's
// defaults left unset, changed by mods.
func enabled(mods ...func(*v1alpha1.AutoStopSpec)) *v1alpha1.AutoStopSpec {
	s := &v1alpha1.AutoStopSpec{Enabled: true, ActiveReplicas: 3}
	for _, m := range mods {
		m(s)
	}
	return s
}

func withSchedule(ws ...v1alpha1.AutoStopWindow) func(*v1alpha1.AutoStopSpec) {
	return func(s *v1alpha1.AutoStopSpec) { s.Schedule = ws }
}

// running is the previous status of an engine auto-stop runs at n replicas.
func running(n int32, r Reason, lastActivity *time.Time) Status {
	return Status{Replicas: i32(n), Reason: r, LastActivityTime: lastActivity, LastScaledAt: ago(3 * time.Hour)}
}

const (
	freshStamp = "2026-11-23T11:58:00Z" // 2m old
	staleStamp = "2026-11-23T11:55:00Z" // 5m old
)

func TestDecide(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     Input
		want   Decision
		err    string
	}{
		// Row 1: disabled.
		"DisabledUnset": {
			reason: "No autoStop: the claim's spec.replicas, Disabled, the idle clock cleared, lastScaledAt kept as history, no requeue of its own.",
			in:     Input{SpecReplicas: 2, Previous: running(0, ReasonIdle, ago(time.Hour)), Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want:   Decision{Status: Status{Replicas: i32(2), Reason: ReasonDisabled, LastScaledAt: ago(3 * time.Hour)}},
		},
		"DisabledAboveEverything": {
			reason: "enabled: false wins over a fresh stamp, an active schedule and a scrape failure.",
			in: Input{
				Spec:         &v1alpha1.AutoStopSpec{Enabled: false, ActiveReplicas: 3, Schedule: []v1alpha1.AutoStopWindow{win("00:00", "23:59")}},
				SpecReplicas: 1, WakeStamp: freshStamp, Activity: Failed("refused"), Phase: v1alpha1.EnginePhaseStable, Now: now,
			},
			want: Decision{Status: Status{Replicas: i32(1), Reason: ReasonDisabled}},
		},
		"DisabledInAnyPhase": {
			reason: "Disabled is decided in every phase, as the original clears its fields before the phase check.",
			in:     Input{SpecReplicas: 2, Previous: running(3, ReasonActivityObserved, ago(time.Minute)), Phase: v1alpha1.EnginePhaseDraining, Now: now},
			want:   Decision{Status: Status{Replicas: i32(2), Reason: ReasonDisabled, LastScaledAt: ago(3 * time.Hour)}},
		},
		"DisabledDoesNotValidate": {
			reason: "A disabled autoStop is not read, so a bad window in it is not an error.",
			in:     Input{Spec: &v1alpha1.AutoStopSpec{ActiveReplicas: 3, Schedule: []v1alpha1.AutoStopWindow{win("99:99", "10:00")}}, SpecReplicas: 2, Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: Status{Replicas: i32(2), Reason: ReasonDisabled}},
		},

		// Row 2: wake.
		"WakeFromZero": {
			reason: "A fresh stamp wakes a stopped engine to activeReplicas and starts the idle clock at the wake.",
			in:     Input{Spec: enabled(), Previous: running(0, ReasonStopped, ago(2*time.Hour)), WakeStamp: freshStamp, Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want: Decision{
				Status:       Status{Replicas: i32(3), Reason: ReasonWakeRequested, LastActivityTime: &now, LastScaledAt: &now},
				Scaled:       true,
				RequeueAfter: time.Minute,
				Message:      "wake requested at 2026-11-23T11:58:00Z",
			},
		},
		"WakeZeroedByHand": {
			reason: "As the original, an engine at zero replicas by its claim wakes too; to keep it down, disable auto-stop.",
			in:     Input{Spec: enabled(), SpecReplicas: 0, WakeStamp: freshStamp, Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want: Decision{
				Status: Status{Replicas: i32(3), Reason: ReasonWakeRequested, LastActivityTime: &now, LastScaledAt: &now}, Scaled: true,
				RequeueAfter: time.Minute, Message: "wake requested at 2026-11-23T11:58:00Z",
			},
		},
		"WakeAboveSchedule": {
			reason: "On a stopped engine wake comes before the schedule: both give activeReplicas, WakeRequested says more.",
			in:     Input{Spec: enabled(withSchedule(win("09:00", "17:00"))), Previous: running(0, ReasonStopped, nil), WakeStamp: freshStamp, Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want: Decision{
				Status: Status{Replicas: i32(3), Reason: ReasonWakeRequested, LastActivityTime: &now, LastScaledAt: &now}, Scaled: true, RequeueAfter: time.Minute,
				Message: "wake requested at 2026-11-23T11:58:00Z",
			},
		},
		"WakeKeepsStoppingEngineUp": {
			reason: "An engine this decision would stop (idle to zero) is not stopped while demand is fresh: activeReplicas, WakeRequested, the clock restarted.",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonActivityObserved, ago(30*time.Minute)), WakeStamp: freshStamp, Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status:       Status{Replicas: i32(3), Reason: ReasonWakeRequested, LastActivityTime: &now, LastScaledAt: ago(3 * time.Hour)},
				RequeueAfter: time.Minute, Message: "wake requested at 2026-11-23T11:58:00Z",
			},
		},
		"WakeIgnoredOnFailingEngine": {
			reason: "A running engine whose scrape fails (an outage: the agent stamps because no endpoint is ready) keeps its count and reason; the stamp is said to be ignored.",
			in:     Input{Spec: enabled(), Previous: running(2, ReasonActivityObserved, ago(time.Hour)), WakeStamp: freshStamp, Activity: Failed("refused"), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status:       running(2, ReasonScrapeFailed, &now),
				RequeueAfter: time.Minute,
				Message:      "the activity scrape failed, which never counts as idle: refused; ignored the wake stamp firebolt.io/wake-requested: the engine runs 2 replica(s), and a stamp wakes only a stopped engine",
			},
		},
		"WakeIgnoredOnBusyEngine": {
			reason: "A running engine with queries records its activity (ActivityObserved, the clock refreshed), not WakeRequested.",
			in:     Input{Spec: enabled(), Previous: running(1, ReasonActivityObserved, ago(time.Hour)), WakeStamp: freshStamp, Activity: Observed(2), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: running(1, ReasonActivityObserved, &now), RequeueAfter: time.Minute,
				Message: "ignored the wake stamp firebolt.io/wake-requested: the engine runs 1 replica(s), and a stamp wakes only a stopped engine",
			},
		},
		"WakeNeverResizesRunning": {
			reason: "A fresh stamp does not move a running engine to activeReplicas: the count sized by hand stays.",
			in:     Input{Spec: enabled(), Previous: running(5, ReasonActivityObserved, ago(time.Minute)), WakeStamp: freshStamp, Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: running(5, ReasonActivityObserved, ago(time.Minute)), RequeueAfter: time.Minute,
				Message: "ignored the wake stamp firebolt.io/wake-requested: the engine runs 5 replica(s), and a stamp wakes only a stopped engine",
			},
		},
		"WakeIgnoredIdlingToIdleReplicas": {
			reason: "Idling to a non-zero idleReplicas keeps the engine running, so a stamp does not stop the scale-down.",
			in: Input{
				Spec:     enabled(func(s *v1alpha1.AutoStopSpec) { s.IdleReplicas = i32(1) }),
				Previous: running(3, ReasonActivityObserved, ago(time.Hour)), WakeStamp: freshStamp, Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now,
			},
			want: Decision{
				Status: Status{Replicas: i32(1), Reason: ReasonIdle, LastActivityTime: ago(time.Hour), LastScaledAt: &now}, Scaled: true, RequeueAfter: time.Minute,
				Message: "no query running or suspended for 30m0s; ignored the wake stamp firebolt.io/wake-requested: the engine runs 1 replica(s), and a stamp wakes only a stopped engine",
			},
		},
		"WakeIgnoredInWindow": {
			reason: "A running engine inside a window stays ScheduleActive.",
			in:     Input{Spec: enabled(withSchedule(win("09:00", "17:00"))), Previous: running(3, ReasonScheduleActive, nil), WakeStamp: freshStamp, Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: running(3, ReasonScheduleActive, nil), RequeueAfter: time.Minute,
				Message: "ignored the wake stamp firebolt.io/wake-requested: the engine runs 3 replica(s), and a stamp wakes only a stopped engine",
			},
		},
		"StaleStampIgnored": {
			reason: "A stamp 5m old does not wake, and the message says why.",
			in:     Input{Spec: enabled(), Previous: running(0, ReasonStopped, nil), WakeStamp: staleStamp, Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want: Decision{
				Status: running(0, ReasonStopped, nil), RequeueAfter: time.Minute,
				Message: `ignored the wake stamp firebolt.io/wake-requested="2026-11-23T11:55:00Z": older than 5m0s`,
			},
		},
		"MalformedStampIgnored": {
			reason: "A stamp that is not RFC 3339 does not wake, and the message says why.",
			in:     Input{Spec: enabled(), Previous: running(0, ReasonStopped, nil), WakeStamp: "now please", Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want: Decision{
				Status: running(0, ReasonStopped, nil), RequeueAfter: time.Minute,
				Message: `ignored the wake stamp firebolt.io/wake-requested="now please": not an RFC 3339 time`,
			},
		},
		"FarFutureStampIgnored": {
			reason: "A stamp years ahead does not pin the engine awake.",
			in:     Input{Spec: enabled(), Previous: running(0, ReasonStopped, nil), WakeStamp: "2062-11-23T12:00:00Z", Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want: Decision{
				Status: running(0, ReasonStopped, nil), RequeueAfter: time.Minute,
				Message: `ignored the wake stamp firebolt.io/wake-requested="2062-11-23T12:00:00Z": more than 5m0s in the future`,
			},
		},

		// Row 3: schedule.
		"ScheduleWakesStopped": {
			reason: "An active window scales a stopped engine to activeReplicas.",
			in:     Input{Spec: enabled(withSchedule(win("09:00", "17:00", "Mon"))), Previous: running(0, ReasonStopped, ago(time.Hour)), Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want: Decision{
				Status: Status{Replicas: i32(3), Reason: ReasonScheduleActive, LastActivityTime: ago(time.Hour), LastScaledAt: &now}, Scaled: true, RequeueAfter: time.Minute,
			},
		},
		"ScheduleAboveIdle": {
			reason: "Inside a window a quiet engine past idleTimeout stays at activeReplicas.",
			in:     Input{Spec: enabled(withSchedule(win("09:00", "17:00"))), Previous: running(3, ReasonScheduleActive, ago(2*time.Hour)), Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: running(3, ReasonScheduleActive, ago(2*time.Hour)), RequeueAfter: time.Minute},
		},
		"ScheduleOtherDay": {
			reason: "A window for Tuesday does not apply on Monday: the stopped engine stays stopped.",
			in:     Input{Spec: enabled(withSchedule(win("09:00", "17:00", "Tue"))), Previous: running(0, ReasonStopped, nil), Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want:   Decision{Status: running(0, ReasonStopped, nil), RequeueAfter: time.Minute},
		},
		"ScheduleWithStaleStamp": {
			reason: "An ignored stamp is reported whichever row decides.",
			in:     Input{Spec: enabled(withSchedule(win("11:00", "13:00"))), Previous: running(3, ReasonScheduleActive, nil), WakeStamp: staleStamp, Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: running(3, ReasonScheduleActive, nil), RequeueAfter: time.Minute,
				Message: `ignored the wake stamp firebolt.io/wake-requested="2026-11-23T11:55:00Z": older than 5m0s`,
			},
		},

		// Row 4: stopped.
		"StoppedStaysStopped": {
			reason: "At zero with no wake and no window: no change, Stopped.",
			in:     Input{Spec: enabled(), Previous: running(0, ReasonIdle, ago(time.Hour)), Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want:   Decision{Status: running(0, ReasonStopped, ago(time.Hour)), RequeueAfter: time.Minute},
		},
		"StoppedAboveScrapeFailure": {
			reason: "At zero there is nothing to scrape: a failure does not refresh the clock.",
			in:     Input{Spec: enabled(), Previous: running(0, ReasonStopped, ago(time.Hour)), Activity: Failed("no active generation"), Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want:   Decision{Status: running(0, ReasonStopped, ago(time.Hour)), RequeueAfter: time.Minute},
		},
		"StoppedFromSpec": {
			reason: "Enabled on a claim at spec.replicas 0 with no previous decision: Stopped at 0.",
			in:     Input{Spec: enabled(), SpecReplicas: 0, Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want:   Decision{Status: Status{Replicas: i32(0), Reason: ReasonStopped}, RequeueAfter: time.Minute},
		},

		// Row 5: scrape failed.
		"ScrapeFailedRefreshesIdleClock": {
			reason: "A failure is never idle: no scale-down past idleTimeout, and the clock restarts now.",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonActivityObserved, ago(2*time.Hour)), Activity: Failed("pod e-g1-0: connection refused"), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: running(3, ReasonScrapeFailed, &now), RequeueAfter: time.Minute,
				Message: "the activity scrape failed, which never counts as idle: pod e-g1-0: connection refused",
			},
		},
		"ScrapeFailedAboveInitializing": {
			reason: "Without an idle clock a failure still reads ScrapeFailed, and anchors the clock.",
			in:     Input{Spec: enabled(), SpecReplicas: 3, Activity: Failed("no Running pod"), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: Status{Replicas: i32(3), Reason: ReasonScrapeFailed, LastActivityTime: &now}, RequeueAfter: time.Minute,
				Message: "the activity scrape failed, which never counts as idle: no Running pod",
			},
		},

		// Row 6: activity.
		"ActivityRefreshesIdleClock": {
			reason: "Queries running or suspended: no change, the clock restarts now.",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonActivityObserved, ago(2*time.Hour)), Activity: Observed(2), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: running(3, ReasonActivityObserved, &now), RequeueAfter: time.Minute},
		},
		"ActivityAboveInitializing": {
			reason: "The first sample with queries is ActivityObserved, not Initializing.",
			in:     Input{Spec: enabled(), SpecReplicas: 2, Activity: Observed(1), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: Status{Replicas: i32(2), Reason: ReasonActivityObserved, LastActivityTime: &now}, RequeueAfter: time.Minute},
		},

		// Row 7: initializing.
		"InitializingAnchorsIdleClock": {
			reason: "The first quiet sample anchors the clock: a fresh engine gets a full idleTimeout.",
			in:     Input{Spec: enabled(), Previous: Status{Replicas: i32(3), Reason: ReasonWakeRequested}, Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: Status{Replicas: i32(3), Reason: ReasonInitializing, LastActivityTime: &now}, RequeueAfter: time.Minute},
		},
		"FirstDecisionStartsFromSpecReplicas": {
			reason: "With no previous decision, auto-stop starts from the claim's spec.replicas.",
			in:     Input{Spec: enabled(), SpecReplicas: 2, Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: Status{Replicas: i32(2), Reason: ReasonInitializing, LastActivityTime: &now}, RequeueAfter: time.Minute},
		},

		"EnablingStartsFromSpecReplicas": {
			reason: "A count recorded while disabled is the claim's old spec.replicas: enabling starts from the current one.",
			in:     Input{Spec: enabled(), SpecReplicas: 4, Previous: Status{Replicas: i32(2), Reason: ReasonDisabled}, Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: Status{Replicas: i32(4), Reason: ReasonInitializing, LastActivityTime: &now}, RequeueAfter: time.Minute},
		},
		"AutoStopOwnsTheCount": {
			reason: "Once auto-stop has decided a count, a different spec.replicas does not change it.",
			in:     Input{Spec: enabled(), SpecReplicas: 4, Previous: running(0, ReasonIdle, ago(time.Hour)), Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want:   Decision{Status: running(0, ReasonStopped, ago(time.Hour)), RequeueAfter: time.Minute},
		},

		// Row 8: idle.
		"IdleAtTimeout": {
			reason: "Quiet for exactly idleTimeout (default 30m) scales to idleReplicas (default 0).",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonActivityObserved, ago(30*time.Minute)), Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: Status{Replicas: i32(0), Reason: ReasonIdle, LastActivityTime: ago(30 * time.Minute), LastScaledAt: &now}, Scaled: true, RequeueAfter: time.Minute,
				Message: "no query running or suspended for 30m0s",
			},
		},
		"IdleToIdleReplicas": {
			reason: "idleReplicas and idleTimeout are honoured.",
			in: Input{
				Spec:     enabled(func(s *v1alpha1.AutoStopSpec) { s.IdleReplicas, s.IdleTimeout = i32(1), dur(10*time.Minute) }),
				Previous: running(3, ReasonActivityObserved, ago(10*time.Minute)), Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now,
			},
			want: Decision{
				Status: Status{Replicas: i32(1), Reason: ReasonIdle, LastActivityTime: ago(10 * time.Minute), LastScaledAt: &now}, Scaled: true, RequeueAfter: time.Minute,
				Message: "no query running or suspended for 10m0s",
			},
		},
		"NegativeQueriesAreQuiet": {
			reason: "Only a positive sum is activity.",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonActivityObserved, ago(time.Hour)), Activity: Observed(-4), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: Status{Replicas: i32(0), Reason: ReasonIdle, LastActivityTime: ago(time.Hour), LastScaledAt: &now}, Scaled: true, RequeueAfter: time.Minute,
				Message: "no query running or suspended for 30m0s",
			},
		},

		// Row 9: otherwise.
		"QuietBelowTimeout": {
			reason: "Quiet for less than idleTimeout: no change, ActivityObserved, the clock unchanged.",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonInitializing, ago(30*time.Minute-time.Second)), Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: running(3, ReasonActivityObserved, ago(30*time.Minute-time.Second)), RequeueAfter: time.Minute},
		},
		"QuietAtIdleReplicas": {
			reason: "Past idleTimeout but already at idleReplicas: nothing to scale.",
			in: Input{
				Spec:     enabled(func(s *v1alpha1.AutoStopSpec) { s.IdleReplicas = i32(1) }),
				Previous: running(1, ReasonIdle, ago(2*time.Hour)), Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now,
			},
			want: Decision{Status: running(1, ReasonActivityObserved, ago(2*time.Hour)), RequeueAfter: time.Minute},
		},

		// Phases.
		"HoldsDuringRollout": {
			reason: "Outside stable and stopped the previous status is kept, even with a fresh stamp, and there is no requeue of its own.",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonActivityObserved, ago(time.Minute)), WakeStamp: freshStamp, Activity: Observed(0), Phase: v1alpha1.EnginePhaseCreating, Now: now},
			want: Decision{
				Status:  running(3, ReasonActivityObserved, ago(time.Minute)),
				Message: `auto-stop waits for the engine to be stable or stopped (phase "creating")`,
			},
		},
		"HoldsBeforeFirstPhase": {
			reason: "On the first call (no phase) the count is the claim's spec.replicas.",
			in:     Input{Spec: enabled(), SpecReplicas: 2, Now: now},
			want: Decision{
				Status:  Status{Replicas: i32(2)},
				Message: `auto-stop waits for the engine to be stable or stopped (phase "")`,
			},
		},

		// Calls without a sample.
		"NotSampledKeepsSampleReason": {
			reason: "Without a sample nothing is learned: the previous sample's reason and clock stay, and it never idles.",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonScrapeFailed, ago(2*time.Hour)), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: running(3, ReasonScrapeFailed, ago(2*time.Hour)), RequeueAfter: time.Minute},
		},
		"NotSampledAfterWake": {
			reason: "Once the stamp is stale, a call without a sample says ActivityObserved rather than a reason that no longer holds.",
			in:     Input{Spec: enabled(), Previous: running(3, ReasonWakeRequested, ago(time.Hour)), WakeStamp: staleStamp, Phase: v1alpha1.EnginePhaseStable, Now: now},
			want: Decision{
				Status: running(3, ReasonActivityObserved, ago(time.Hour)), RequeueAfter: time.Minute,
				Message: `ignored the wake stamp firebolt.io/wake-requested="2026-11-23T11:55:00Z": older than 5m0s`,
			},
		},
		"NotSampledAnchors": {
			reason: "Without a clock, a call without a sample anchors it (Initializing): that only delays idling.",
			in:     Input{Spec: enabled(), Previous: Status{Replicas: i32(3), Reason: ReasonScheduleActive}, Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: Status{Replicas: i32(3), Reason: ReasonInitializing, LastActivityTime: &now}, RequeueAfter: time.Minute},
		},

		// Defaults, bounds, clock.
		"PollIntervalIsTheRequeue": {
			reason: "Every decision requeues after pollInterval.",
			in:     Input{Spec: enabled(func(s *v1alpha1.AutoStopSpec) { s.PollInterval = dur(30 * time.Second) }), Previous: running(0, ReasonStopped, nil), Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want:   Decision{Status: running(0, ReasonStopped, nil), RequeueAfter: 30 * time.Second},
		},
		"PollIntervalFloor": {
			reason: "A pollInterval under 1s is raised to 1s, so the requeue never becomes a hot loop.",
			in:     Input{Spec: enabled(func(s *v1alpha1.AutoStopSpec) { s.PollInterval = dur(10 * time.Millisecond) }), Previous: running(0, ReasonStopped, nil), Phase: v1alpha1.EnginePhaseStopped, Now: now},
			want:   Decision{Status: running(0, ReasonStopped, nil), RequeueAfter: time.Second},
		},
		"NonPositiveDurationsTakeDefaults": {
			reason: "As the original, a zero or negative duration is the default (30m, 1m).",
			in: Input{
				Spec:     enabled(func(s *v1alpha1.AutoStopSpec) { s.IdleTimeout, s.PollInterval = dur(0), dur(-time.Second) }),
				Previous: running(3, ReasonActivityObserved, ago(30*time.Minute-time.Second)), Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now,
			},
			want: Decision{Status: running(3, ReasonActivityObserved, ago(30*time.Minute-time.Second)), RequeueAfter: time.Minute},
		},
		"PreviousCountOutOfRangeUntrusted": {
			reason: "A count Decide never writes (edited status) is replaced by the claim's spec.replicas.",
			in:     Input{Spec: enabled(), SpecReplicas: 2, Previous: Status{Replicas: i32(-1), Reason: ReasonActivityObserved, LastActivityTime: ago(time.Minute)}, Activity: Observed(0), Phase: v1alpha1.EnginePhaseStable, Now: now},
			want:   Decision{Status: Status{Replicas: i32(2), Reason: ReasonActivityObserved, LastActivityTime: ago(time.Minute)}, RequeueAfter: time.Minute},
		},
		"StampedTimesAreWholeUTCSeconds": {
			reason: "Times are written as status keeps them (whole seconds, UTC), so a decision read back compares equal.",
			in:     Input{Spec: enabled(), SpecReplicas: 3, Activity: Observed(1), Phase: v1alpha1.EnginePhaseStable, Now: now.Add(700 * time.Millisecond).In(time.FixedZone("x", 3600))},
			want:   Decision{Status: Status{Replicas: i32(3), Reason: ReasonActivityObserved, LastActivityTime: &now}, RequeueAfter: time.Minute},
		},

		// Invalid specs, which admission refuses.
		"InvalidWindow": {
			reason: "A bad window is an error naming the field.",
			in:     Input{Spec: enabled(withSchedule(win("08:00", "09:00"), win("8:00", "09:00"))), Phase: v1alpha1.EnginePhaseStable, Now: now},
			err:    `spec.autoStop.schedule[1].start: Invalid value: "8:00": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
		"InvalidWindowOfTheClass": {
			reason: "Field names where the autoStop was read, such as the class.",
			in:     Input{Spec: enabled(withSchedule(win("08:00", "25:00"))), Field: field.NewPath("class", "spec", "autoStop"), Phase: v1alpha1.EnginePhaseStable, Now: now},
			err:    `class.spec.autoStop.schedule[0].end: Invalid value: "25:00": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
		"ActiveReplicasZero": {
			reason: "Waking to zero would never wake.",
			in:     Input{Spec: enabled(func(s *v1alpha1.AutoStopSpec) { s.ActiveReplicas = 0 }), Phase: v1alpha1.EnginePhaseStable, Now: now},
			err:    `spec.autoStop.activeReplicas: Invalid value: 0: must be between 1 and 1000`,
		},
		"ActiveReplicasAboveMaximum": {
			reason: "activeReplicas has spec.replicas' maximum.",
			in:     Input{Spec: enabled(func(s *v1alpha1.AutoStopSpec) { s.ActiveReplicas = 1001 }), Phase: v1alpha1.EnginePhaseStable, Now: now},
			err:    `spec.autoStop.activeReplicas: Invalid value: 1001: must be between 1 and 1000`,
		},
		"IdleAboveActive": {
			reason: "idleReplicas may not exceed activeReplicas.",
			in:     Input{Spec: enabled(func(s *v1alpha1.AutoStopSpec) { s.IdleReplicas = i32(4) }), Phase: v1alpha1.EnginePhaseStable, Now: now},
			err:    `spec.autoStop.idleReplicas: Invalid value: 4: must be between 0 and activeReplicas`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Decide(tc.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.err {
				t.Fatalf("%s\nDecide(...) error:\n got: %s\nwant: %s", tc.reason, gotErr, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDecide(...): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDecideStampsUTC(t *testing.T) {
	// cmp compares times with Equal, which ignores the zone; status keeps
	// UTC, so the zone of what Decide stamps is checked here.
	local := now.In(time.FixedZone("UTC+1", 3600))
	d, err := Decide(Input{Spec: enabled(), SpecReplicas: 3, Activity: Observed(1), Phase: v1alpha1.EnginePhaseStable, Now: local})
	if err != nil {
		t.Fatalf("Decide(...): %v", err)
	}
	if loc := d.Status.LastActivityTime.Location(); loc != time.UTC {
		t.Errorf("Decide(...).Status.LastActivityTime is in %v, want UTC", loc)
	}
}
