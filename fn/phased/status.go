package phased

import (
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Status is v1alpha1.PhasedRolloutStatus with its times parsed. Times are
// whole seconds in UTC, what the API's RFC 3339 strings hold, so that a
// Status survives Encode and Decode unchanged and an unchanged decision
// never causes a status write.
type Status struct {
	Phase            v1alpha1.PhasedRolloutPhase
	UpdateRevision   string
	RolloutStartTime time.Time
	RolloutEndTime   time.Time
	RollingPod       *RollingPod
}

// RollingPod is v1alpha1.RollingPodStatus with its times parsed: the step
// under way, whose partition is the pod last let go.
type RollingPod struct {
	Status                      v1alpha1.RollingPodPhase
	Partition                   int32
	AnalysisStartTime           time.Time
	LastCheckTime               time.Time
	ConsecutiveSuccessfulChecks int32
	ConsecutiveFailedChecks     int32
	TotalFailedChecks           int32
	LastCheckMessage            string
}

// clone copies s deeply, so that a decision can change its step while the
// previous status stays what it was.
func (s Status) clone() Status {
	if s.RollingPod != nil {
		p := *s.RollingPod
		s.RollingPod = &p
	}
	return s
}

// Encode is s in the API's form; nil for the zero Status, so a StatefulSet
// Step never decided about writes no status.
func (s Status) Encode() *v1alpha1.PhasedRolloutStatus {
	if s.Phase == "" && s.UpdateRevision == "" && s.RolloutStartTime.IsZero() && s.RolloutEndTime.IsZero() && s.RollingPod == nil {
		return nil
	}
	out := &v1alpha1.PhasedRolloutStatus{
		Phase:            s.Phase,
		UpdateRevision:   s.UpdateRevision,
		RolloutStartTime: stamp(s.RolloutStartTime),
		RolloutEndTime:   stamp(s.RolloutEndTime),
	}
	if p := s.RollingPod; p != nil {
		out.RollingPodStatus = &v1alpha1.RollingPodStatus{
			Status:                      p.Status,
			Partition:                   p.Partition,
			AnalysisStartTime:           stamp(p.AnalysisStartTime),
			LastCheckTime:               stamp(p.LastCheckTime),
			ConsecutiveSuccessfulChecks: p.ConsecutiveSuccessfulChecks,
			ConsecutiveFailedChecks:     p.ConsecutiveFailedChecks,
			TotalFailedChecks:           p.TotalFailedChecks,
			LastCheckMessage:            p.LastCheckMessage,
		}
	}
	return out
}

// stamp is t as the API stores it; "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// second is t as a status stores it.
func second(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }
