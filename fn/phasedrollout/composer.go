// Package phasedrollout composes a PhasedRollout: seed 004's phased
// rollout of a StatefulSet someone else owns (a Helm chart, another
// operator). The StatefulSet is never composed, so the claim's deletion
// can never take it: the function composes a provider-kubernetes Object
// that may only observe and update it, whose manifest holds the
// StatefulSet's identity, the seed's marker annotation and the rolling
// update partition a step decides. The procedure is fn/phased's, the query
// fn/promcheck's, as for PhasedStatefulSet and engines.
package phasedrollout

import (
	"context"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

// Composer composes XPhasedRollout composites.
type Composer struct {
	check   promcheck.Runner
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
func New(check promcheck.Runner, o ...Option) *Composer {
	c := &Composer{check: check, now: time.Now, metrics: metrics.Nop{}, memory: phased.NewMemory()}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Compose fills rsp with the Object that sets the target's partition and
// the rollout's status. A check due in this call is run between two pure
// steps: the first says that it is due, the second folds its outcome in.
func (c *Composer) Compose(ctx context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	in, err := read(call.Req, call.XR)
	if err != nil {
		return err
	}
	now := c.now()
	key := string(in.XR.GetUID())
	in.Recent = c.memory.Recall(key, call.Req, now)
	p := Compute(in, call.Config, now, nil)
	// Crossplane calls again within one reconcile while the requirements
	// change, and keeps only the last answer: the check runs once
	// everything it needs was fetched, so Prometheus is asked once per
	// reconcile.
	if p.NeedCheck && in.ClaimGen.Resolved && (in.XR.Spec.Check.Query.SecretRef == "" || in.SecretResolved) {
		o := promcheck.RunWithSecret(ctx, c.check, in.XR.Spec.Check.Query, "spec.check.query.secretRef", in.Claim.Namespace,
			promcheck.Secret{Found: in.SecretFound, Data: in.Secret}, now)
		c.metrics.RolloutChecked(o)
		p = Compute(in, call.Config, now, &o)
	}
	call.Log.Debug("Composed phased rollout", "target", in.XR.Spec.TargetRef, "phase", p.Status.Phase, "partition", p.Partition, "ttl", p.TTL)
	if err := composite.Write(call.Req, rsp, composite.Response[Status]{
		Status:       p.Status,
		Ready:        p.Ready,
		Resources:    p.Resources,
		Conditions:   p.Conditions,
		Results:      p.Results,
		Requirements: p.Require,
		TTL:          p.TTL,
	}); err != nil {
		return err
	}
	c.memory.Settle(key, call.Req, rsp, p.Moved)
	return nil
}
