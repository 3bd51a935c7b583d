package phased

import (
	"fmt"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// The check block's bounds, as its schema has them. A value outside them
// did not come through admission; it is brought inside rather than refused,
// because a rollout that stops deciding holds every pod on its revision.
const (
	maxInitialDelaySeconds = 86400
	maxPeriodSeconds       = 3600
	maxSuccessThreshold    = 100
)

// timing is the check block's timings, within the schema's bounds.
type timing struct {
	initialDelay time.Duration
	period       time.Duration
	threshold    int32
}

func newTiming(c v1alpha1.RolloutCheck) (timing, []string) {
	var notes []string
	bound := func(field string, v, lo, hi int32) int32 {
		if v >= lo && v <= hi {
			return v
		}
		b := min(max(v, lo), hi)
		notes = append(notes, fmt.Sprintf("check.%s %d is outside [%d, %d]: %d used", field, v, lo, hi, b))
		return b
	}
	t := timing{
		initialDelay: time.Duration(bound("initialDelaySeconds", c.InitialDelaySeconds, 0, maxInitialDelaySeconds)) * time.Second,
		period:       time.Duration(bound("periodSeconds", c.PeriodSeconds, 1, maxPeriodSeconds)) * time.Second,
		threshold:    bound("successThreshold", c.SuccessThreshold, 1, maxSuccessThreshold),
	}
	return t, notes
}

// drainInterval is the gate's interval, at least ttlFloor and at most the
// longest check period: a drain probe is cheaper than a check, and a pod
// that has drained should not wait longer than a check would.
func drainInterval(g *DrainGate) time.Duration {
	return min(max(g.Interval, ttlFloor), maxPeriodSeconds*time.Second)
}
