// Package phased decides seed 004's phased StatefulSet rollout, one call at
// a time.
//
// A composition function keeps no timers and no memory: Crossplane calls it
// on watch events and on the TTL it asks for, and every call must decide
// from the status the last call wrote plus what it observes now. So the
// procedure is one step function, Step, and it is pure (no I/O, no clock,
// no randomness): the caller reads the StatefulSet, its pods and the
// previous status, passes the clock in, and applies the Decision.
//
// The StatefulSet's rolling-update partition is the only lever: pods at or
// above it move to the update revision, pods below it stay. Step lowers it
// by at most one per call, and only once the pod it last let go is updated,
// every pod is available, the initial delay has passed and successThreshold
// checks in a row have succeeded.
//
// The check and the drain probe are I/O, so Step never runs them: it asks
// for one (Decision.Need) and the caller calls it again with the outcome.
package phased
