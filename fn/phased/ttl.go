package phased

import "time"

// Requeue intervals.
const (
	// ttlFloor is the least non-zero TTL: progress that could go on at once
	// still waits this long, so that a bug cannot call in a tight loop.
	ttlFloor = time.Second

	// ttlWatch backs up a watch event. What a step waits for on pods and
	// availability (a pod taking the update revision, readiness,
	// minReadySeconds, the controller declaring the revision current) all
	// shows in the StatefulSet's status, which Crossplane watches, so the
	// event normally calls first. Events can be missed (a dropped watch,
	// the circuit breaker), so a timer bounds the stall; it is long
	// because it runs for every StatefulSet that is rolling, most of them
	// waiting on pods that take tens of seconds to start anyway.
	ttlWatch = 30 * time.Second

	// ttlStale is the wait for the StatefulSet controller to catch up with
	// a new spec. It normally takes well under a second and its status
	// write is a watch event; this short timer covers a missed event while
	// the rollout is frozen.
	ttlStale = 5 * time.Second

	// ttlNeed is the TTL of a Decision that asks for a check or a drain
	// probe: the caller calls again at once with the outcome, and if it
	// could not, the next call should come soon.
	ttlNeed = time.Second
)

// atLeastFloor raises a non-zero TTL to ttlFloor; 0 stays "no timer".
func atLeastFloor(d time.Duration) time.Duration {
	if d > 0 && d < ttlFloor {
		return ttlFloor
	}
	return d
}
