package phased

import (
	"fmt"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Decode reads a status back from the API's form at now. The status comes
// from the cluster, where anything may have written it, so nothing is taken
// on trust: an unknown phase or step status is dropped (Step works it out
// again), a time that does not parse is unset, a time after now is now (a
// future analysisStartTime would hold a step for as long as its author
// liked), a negative counter is 0, an overlong revision is dropped and a
// message clipped. Each repair is said in a note. The partition is Step's
// to check, against the replicas.
func Decode(api *v1alpha1.PhasedRolloutStatus, now time.Time) (Status, []string) {
	if api == nil {
		return Status{}, nil
	}
	d := decoder{now: second(now)}
	s := Status{
		Phase:            d.phase(api.Phase),
		UpdateRevision:   d.revision(api.UpdateRevision),
		RolloutStartTime: d.time("rolloutStartTime", api.RolloutStartTime),
		RolloutEndTime:   d.time("rolloutEndTime", api.RolloutEndTime),
	}
	if p := api.RollingPodStatus; p != nil {
		s.RollingPod = &RollingPod{
			Status:                      d.podPhase(p.Status),
			Partition:                   p.Partition,
			AnalysisStartTime:           d.time("rollingPodStatus.analysisStartTime", p.AnalysisStartTime),
			LastCheckTime:               d.time("rollingPodStatus.lastCheckTime", p.LastCheckTime),
			ConsecutiveSuccessfulChecks: d.count("rollingPodStatus.consecutiveSuccessfulChecks", p.ConsecutiveSuccessfulChecks),
			ConsecutiveFailedChecks:     d.count("rollingPodStatus.consecutiveFailedChecks", p.ConsecutiveFailedChecks),
			TotalFailedChecks:           d.count("rollingPodStatus.totalFailedChecks", p.TotalFailedChecks),
			LastCheckMessage:            clip(p.LastCheckMessage),
		}
	}
	return s, d.notes
}

// decoder reads the fields of one status and collects the repairs.
type decoder struct {
	now   time.Time
	notes []string
}

func (d *decoder) note(format string, args ...any) {
	d.notes = append(d.notes, fmt.Sprintf(format, args...))
}

func (d *decoder) time(field, v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, v)
	if len(v) > maxTime || err != nil {
		d.note("%s %q is not an RFC 3339 time: treated as unset", field, clip(v))
		return time.Time{}
	}
	if t = second(t); t.After(d.now) {
		d.note("%s %s is in the future: treated as now", field, stamp(t))
		return d.now
	}
	return t
}

func (d *decoder) count(field string, v int32) int32 {
	if v < 0 {
		d.note("%s %d is negative: treated as 0", field, v)
		return 0
	}
	return v
}

func (d *decoder) revision(v string) string {
	if len(v) > maxRevision {
		d.note("updateRevision is longer than any revision name: treated as unset")
		return ""
	}
	return v
}

func (d *decoder) phase(v v1alpha1.PhasedRolloutPhase) v1alpha1.PhasedRolloutPhase {
	switch v {
	case "", v1alpha1.PhasedRolloutRolling, v1alpha1.PhasedRolloutUpdated, v1alpha1.PhasedRolloutSuspended:
		return v
	}
	d.note("phase %q is unknown: treated as unset", clip(string(v)))
	return ""
}

func (d *decoder) podPhase(v v1alpha1.RollingPodPhase) v1alpha1.RollingPodPhase {
	switch v {
	case "", v1alpha1.RollingPodWaitForPodToBeUpdated, v1alpha1.RollingPodWaitForAllPodsToBeAvailable,
		v1alpha1.RollingPodWaitForInitialDelay, v1alpha1.RollingPodWaitForChecks,
		v1alpha1.RollingPodWaitForDrain, v1alpha1.RollingPodPrometheusError:
		return v
	}
	d.note("rollingPodStatus.status %q is unknown: treated as unset", clip(string(v)))
	return ""
}
