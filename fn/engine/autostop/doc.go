// Package autostop decides an engine's auto-stop: the replica count the
// engine composer should run, and the status that explains it (issue 10).
//
// Everything here is pure: the caller reads the effective spec, the previous
// status.autoStop, the wake stamp annotation and the activity sample, and
// passes the clock in. Decide applies the original operator's precedence
// (reference §3.2) in one place, so the composer has one function to call
// and the table tests have one function to pin.
//
// The decision lives in status and never in spec.replicas: the composer
// composes Status.Replicas, so a GitOps tool never sees the claim's
// spec.replicas change under it.
package autostop
