// Package phasedsts composes a PhasedStatefulSet: the user's StatefulSet,
// whose updates roll one pod at a time behind Prometheus checks (seed 004).
// The procedure itself is fn/phased's, the query fn/promcheck's; this
// package reads the request, renders the StatefulSet with the partition a
// step decides, and writes the status that carries the rollout's clock.
package phasedsts

import (
	"context"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

// Checker runs a check's query at a time; *promcheck.Client is the real
// one.
type Checker = promcheck.Runner

// Composer composes XPhasedStatefulSet composites.
type Composer struct {
	check   Checker
	now     func() time.Time
	metrics metrics.Recorder
	// memory is each rollout's last move of its partition (phased.Memory).
	memory *phased.Memory
}

// An Option configures a Composer.
type Option func(*Composer)

// WithClock replaces the wall clock, for tests.
func WithClock(now func() time.Time) Option {
	return func(c *Composer) { c.now = now }
}

// WithMetrics reports every check run to r.
func WithMetrics(r metrics.Recorder) Option {
	return func(c *Composer) { c.metrics = r }
}

// New returns a Composer running its checks with check.
func New(check Checker, o ...Option) *Composer {
	c := &Composer{check: check, now: time.Now, metrics: metrics.Nop{}, memory: phased.NewMemory()}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Compose fills rsp with the StatefulSet and the rollout's status. A check
// due in this call is run between two pure steps: the first says that it
// is due, the second folds its outcome in.
func (c *Composer) Compose(ctx context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	in, err := read(call.Req, call.XR)
	if err != nil {
		return err
	}
	now := c.now()
	key := string(in.XR.GetUID())
	in.Recent = c.memory.Recall(key, call.Req, now)
	p := Compute(in, call.Config, now, nil)
	// Crossplane calls once more within this reconcile when its first call
	// returns requirements it has not fetched (the claim always is one), and
	// keeps only the last answer: the check runs on that call, with the
	// Secret, so Prometheus is asked once per reconcile.
	if p.NeedCheck && in.ClaimGen.Resolved && (in.XR.Spec.Check.Query.SecretRef == "" || in.SecretResolved) {
		o := c.runCheck(ctx, in, now)
		c.metrics.RolloutChecked(o)
		p = Compute(in, call.Config, now, &o)
	}
	call.Log.Debug("Composed phased StatefulSet", "phase", p.Status.Phase, "partition", p.Partition, "ttl", p.TTL)
	if err := write(call.Req, rsp, p); err != nil {
		return err
	}
	c.memory.Settle(key, call.Req, rsp, p.Moved)
	return nil
}

// runCheck runs the check with the Secret's credentials.
func (c *Composer) runCheck(ctx context.Context, in Inputs, now time.Time) promcheck.Outcome {
	return promcheck.RunWithSecret(ctx, c.check, in.XR.Spec.Check.Query, "spec.check.query.secretRef", in.Claim.Namespace,
		promcheck.Secret{Found: in.SecretFound, Data: in.Secret}, now)
}
