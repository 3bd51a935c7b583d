package phased

import (
	"fmt"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// AnalysisInput is everything one call of Analyze reads.
type AnalysisInput struct {
	// Now is the time of the call.
	Now time.Time
	// Check is the effective check block.
	Check v1alpha1.RolloutCheck
	// Generation is the generation waiting to be switched to.
	Generation int32
	// Ready: every pod of the generation is ready.
	Ready bool
	// Previous is the analysis status the last call wrote; one of another
	// generation is not this analysis's and is started over.
	Previous *v1alpha1.AnalysisStatus
	// CheckOutcome is the outcome of the check a decision asked for.
	CheckOutcome *Outcome
}

// AnalysisDecision is what one call of Analyze decides. As with Step, a
// decision whose Need is NeedCheck carries the previous status and no
// event: call again with the check's outcome.
type AnalysisDecision struct {
	Need   Need
	Passed bool
	Status *v1alpha1.AnalysisStatus
	TTL    time.Duration
	Events []Event
	Notes  []string
}

// ReasonAnalysisFailed is the event of the first failed check of a streak.
const ReasonAnalysisFailed = "AnalysisCheckFailed"

// Analyze decides one call of the analysis of a new generation: once all
// its pods are ready, seed 004's step conditions from the initial delay on
// (see call.analyze). A generation whose pods stop being ready starts its
// analysis over: checks that ran while a pod was down say nothing of the
// pods that are up.
func Analyze(in AnalysisInput) AnalysisDecision {
	c := newCall(Input{Now: in.Now, Check: in.Check})
	st, passed := decodeAnalysis(c, in.Previous, in.Generation)
	if !in.Ready {
		st.restartAnalysis(v1alpha1.RollingPodWaitForAllPodsToBeAvailable)
		return c.analysisDecision(in.Generation, st, false, ttlWatch, nil)
	}
	if passed {
		return c.analysisDecision(in.Generation, st, true, 0, nil)
	}
	prev := st
	r, ok := c.analyze(&st, in.CheckOutcome)
	if r.need == NeedCheck {
		d := c.analysisDecision(in.Generation, prev, false, ttlNeed, nil)
		d.Need = NeedCheck
		return d
	}
	var events []Event
	for _, e := range r.events {
		if e.Reason == ReasonCheckFailed {
			e.Reason = ReasonAnalysisFailed
			e.Message = fmt.Sprintf("the analysis of generation %d: %s", in.Generation, st.LastCheckMessage)
		}
		events = append(events, e)
	}
	return c.analysisDecision(in.Generation, st, ok, r.ttl, events)
}

// decodeAnalysis reads the previous analysis of generation gen, trusting
// it no more than Decode trusts a rollout's status.
func decodeAnalysis(c *call, api *v1alpha1.AnalysisStatus, gen int32) (RollingPod, bool) {
	if api == nil || api.Generation != gen {
		return RollingPod{}, false
	}
	s, notes := Decode(&v1alpha1.PhasedRolloutStatus{RollingPodStatus: &v1alpha1.RollingPodStatus{
		Status: api.Status, AnalysisStartTime: api.AnalysisStartTime, LastCheckTime: api.LastCheckTime,
		ConsecutiveSuccessfulChecks: api.ConsecutiveSuccessfulChecks, ConsecutiveFailedChecks: api.ConsecutiveFailedChecks,
		TotalFailedChecks: api.TotalFailedChecks, LastCheckMessage: api.LastCheckMessage,
	}}, c.now)
	c.notes = append(c.notes, notes...)
	return *s.RollingPod, api.Passed && s.RollingPod.ConsecutiveSuccessfulChecks >= c.timing.threshold
}

func (c *call) analysisDecision(gen int32, st RollingPod, passed bool, ttl time.Duration, events []Event) AnalysisDecision {
	enc := Status{RollingPod: &st}.Encode().RollingPodStatus
	return AnalysisDecision{
		Passed: passed,
		Status: &v1alpha1.AnalysisStatus{
			Generation: gen, Status: enc.Status, Passed: passed,
			AnalysisStartTime: enc.AnalysisStartTime, LastCheckTime: enc.LastCheckTime,
			ConsecutiveSuccessfulChecks: enc.ConsecutiveSuccessfulChecks, ConsecutiveFailedChecks: enc.ConsecutiveFailedChecks,
			TotalFailedChecks: enc.TotalFailedChecks, LastCheckMessage: enc.LastCheckMessage,
		},
		TTL:    atLeastFloor(ttl),
		Events: events,
		Notes:  c.notes,
	}
}
