package engine

import (
	"context"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// Composer composes XFireboltEngine composites: read, compute, write.
type Composer struct {
	prober DrainProber
	events EventLister
	check  Checker
	now    func() time.Time
	rec    metrics.Recorder
	// memory is each in-place rollout's last move of its partition.
	memory *phased.Memory
}

// An Option configures a Composer.
type Option func(*Composer)

// WithClock replaces the wall clock, for tests.
func WithClock(now func() time.Time) Option {
	return func(c *Composer) { c.now = now }
}

// WithChecker runs spec.analysis's checks with check; without one a due
// check fails, saying so.
func WithChecker(check Checker) Option {
	return func(c *Composer) { c.check = check }
}

// New returns the engine composer. prober runs drain checks and events
// lists StatefulSet Warning events; either may be nil, in which case a drain
// check reports that it did not run and no events are read.
func New(prober DrainProber, events EventLister, o ...Option) *Composer {
	c := &Composer{prober: prober, events: events, now: time.Now, rec: metrics.Nop{}, memory: phased.NewMemory()}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Compose composes one XFireboltEngine. It returns an error only for a
// request it cannot decode or a response it cannot encode.
func (c *Composer) Compose(ctx context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	in, err := Read(call)
	if err != nil {
		return err
	}
	now := c.now()
	sig := c.gather(ctx, call.Log, in, now, c.memory.Recall(in.Composite.UID, call.Req, now))
	p := Compute(in, sig, now)
	c.rec.EngineComposed(observedEngine(call.Req, in, p))
	if p.AutoStopDecided != "" {
		c.rec.AutoStopDecided(p.AutoStopDecided)
	}
	call.Log.Debug("Composed engine", "engine", in.Engine, "namespace", in.Namespace,
		"phase", p.Status.Phase, "currentGeneration", p.Status.CurrentGeneration,
		"activeGeneration", p.Status.ActiveGeneration, "resources", len(p.Resources), "ttl", p.TTL.String(),
		// Whether this call changes the status it was given (lastReconciled
		// moves with every change): a write, and a watch event of the
		// composite and its claim.
		"statusChanged", !p.Status.LastReconciled.Equal(in.Status.LastReconciled))
	if err := Write(call.Req, rsp, p); err != nil {
		return err
	}
	c.memory.Settle(in.Composite.UID, call.Req, rsp, p.Moved)
	return nil
}

// gather reads the live signals this call needs, and no others.
func (c *Composer) gather(ctx context.Context, log logging.Logger, in Inputs, now time.Time, recent *phased.Recent) Signals {
	sig := Signals{Recent: recent}
	if ai, ok := analysisInput(in, now); ok && phased.Analyze(ai).Need == phased.NeedCheck {
		// Crossplane calls once more within this reconcile while it has not
		// fetched what the engine requires (its instance always), and keeps
		// only the last answer: the check runs on that call, with
		// everything required, so Prometheus is asked once per reconcile.
		if in.requirementsFetched() {
			o := runAnalysis(ctx, c.check, in, ai.Generation, now)
			c.rec.RolloutChecked(o)
			sig.Analysis = &o
		}
	}
	c.gatherStep(ctx, in, now, &sig)
	if d, ok := dueDrainCheck(in); ok && c.prober != nil {
		v := c.drain(ctx, in, d)
		sig.Drain = &v
	}
	if gen, ok := dueActivitySample(in); ok {
		switch {
		case gen < 0:
			sig.Activity = autostop.Failed("the engine has no active generation to scrape")
		case c.prober == nil:
			sig.Activity = autostop.Failed(errNoKube)
		default:
			s := generationScrape(in, gen)
			sig.Activity = activitySample(c.prober.Activity(ctx, s.Namespace, s.Selector, s.Options))
		}
	}
	if s, ok := dueWarningLookup(in); ok && c.events != nil {
		events, err := c.events.Warnings(ctx, in.Namespace, s.UID)
		if err != nil {
			// Best effort: the diagnostic must never fail the call.
			log.Debug("Cannot list StatefulSet Warning events", "statefulSet", s.Name, "error", err)
		} else {
			sig.Warning = latestWarning(s.Name, events)
		}
	}
	return sig
}

// gatherStep runs the I/O an in-place step asks for: the check, then the
// drain probe of the pod it is about to let go, at most one of each.
func (c *Composer) gatherStep(ctx context.Context, in Inputs, now time.Time, sig *Signals) {
	si, ok := stepInput(in, now)
	if !ok {
		return
	}
	si.Recent = sig.Recent
	d := phased.Step(si)
	if d.Need == phased.NeedCheck {
		// As for the analysis: the check runs on the call that has the
		// Secret, once per reconcile.
		if !in.requirementsFetched() {
			return
		}
		o := runAnalysis(ctx, c.check, in, clampInt32(int64(in.Status.ActiveGeneration)), now)
		c.rec.RolloutChecked(o)
		sig.StepCheck = &o
		si.CheckOutcome = checkOutcome(o)
		d = phased.Step(si)
	}
	if d.Need != phased.NeedDrain {
		return
	}
	v := scrape.Verdict{Failing: true, Message: "the drain check did not run: " + errNoKube}
	if c.prober != nil {
		v = c.drain(ctx, in, podScrape(in, in.Status.ActiveGeneration, d.DrainOrdinal))
	}
	sig.StepDrain = &podDrain{Ordinal: d.DrainOrdinal, Verdict: v}
}

// drain runs one drain check and counts it against the engine when it
// fails, as the original's per-engine drain check error counter does.
func (c *Composer) drain(ctx context.Context, in Inputs, d drainCheck) scrape.Verdict {
	v := c.prober.Drain(ctx, d.Namespace, d.Selector, d.Options)
	if v.Failing {
		c.rec.EngineDrainCheckFailed(metrics.EngineRef{Namespace: in.Namespace, Name: in.Engine})
	}
	return v
}
