// Package scrape reads the engine's drain gauges from its pods' metrics
// endpoint, the live signal behind the engine composer's drain check (seed 000,
// firebolt-operator.md §2.6).
//
// The composer's read layer calls Client.Drain and hands the resulting Verdict, a
// plain comparable value, to its pure compute layer. Nothing here ever fails
// a function call: every problem (list error, timeout, bad status, bad body,
// even a panic in a scrape goroutine) becomes "not drained" with a cause
// naming the pod, so a transient failure can only delay a rollout, never
// delete a generation early. What a pod sends is bounded before it costs
// memory (Parse), and Clients sharing a Limiter bound the scrapes in flight
// across every check of the process.
package scrape
