// Package engine composes an XFireboltEngine: the blue-green generations of
// a Firebolt engine (seed 001), their drain check (seed 000) and the
// engine's conditions, as a Crossplane composer.
//
// The composer has the three layers of the original reconciler, with I/O
// only at the edges:
//
//   - read (inputs.go, signals.go): the request becomes typed Inputs (the
//     composite's spec and status, the claim's name and namespace, observed
//     composed resources by composition-resource-name, the required
//     FireboltInstance and FireboltEngineClass, the FireboltEngine claim
//     itself for its generation (fn/claimgen), the function input), and,
//     only when the phase needs them, live Signals: the drain verdict of the
//     draining generation and the Warning events of a stuck StatefulSet.
//   - compute (phase.go and the files it calls): Compute is pure. It
//     decides every transition in one place, renders the current
//     generation, reproduces older generations from their recorded
//     renderings, and returns a Plan (assembled in plan.go): desired objects
//     and their readiness, the complete next status, conditions, events,
//     requirements and the requeue TTL.
//   - write (write.go): the Plan becomes the RunFunctionResponse through
//     composite.Write, the write tail every composer shares.
//
// Crossplane deletes every composed resource missing from the desired state
// and keeps the first name it saw for a composition-resource-name. So every
// generation that must survive is returned on every call, each generation
// has resource-names of its own (g<N>-statefulset, g<N>-headless,
// g<N>-config), and leaving a generation out is how it is deleted.
//
// A generation's objects are only ever returned from its rendering as
// recorded in the composite's status (status.renderings), and a rendering is
// recorded in a response that does not yet return its objects. Crossplane
// applies resources before it writes status, so the live objects of a
// generation always match a rendering the status already holds; drift is a
// difference between that recorded rendering's hash and the hash of what the
// function would render now, which API-server defaults never affect.
package engine
