// Package promcheck runs the Prometheus checks of seed 004's phased
// rollouts: one instant query per check, through Prometheus's own HTTP API
// client.
//
// A check succeeds when the query returns data and fails when it returns
// none or cannot be run, like an alert rule turned around: the expression
// describes the healthy state. Client.Run never fails a function call and
// never panics: every problem becomes a failed Outcome with a Cause from a
// closed set (for metrics) and a short message for the composite's status.
// The message is built from what a server sent, so it is scrubbed of every
// credential value before it leaves the package: a status is readable by
// anyone who can read the claim, the Secret is not.
//
// The evaluation time is an argument, so the caller, a pure core that
// decides from what it is given, stays deterministic in tests.
package promcheck
