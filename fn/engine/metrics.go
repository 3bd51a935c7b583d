package engine

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// WithMetrics reports every composed engine's phase transition to r.
func WithMetrics(r metrics.Recorder) Option {
	return func(c *Composer) { c.rec = r }
}

// A ProberOption configures the DrainProber NewProber returns.
type ProberOption func(*scrapeProber)

// WithProberMetrics reports every drain check to r.
func WithProberMetrics(r metrics.Recorder) ProberOption {
	return func(p *scrapeProber) { p.metrics = r }
}

// observedEngine is what the metrics learn from one call: the phase
// observed, the phase written and whether the composite is going.
func observedEngine(req *fnv1.RunFunctionRequest, in Inputs, p Plan) metrics.Engine {
	meta := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue()
	_, deleting := meta.GetFields()["deletionTimestamp"]
	return metrics.Engine{
		Namespace: in.Namespace,
		Name:      in.Engine,
		From:      string(in.Status.Phase),
		To:        string(p.Status.Phase),
		Deleting:  deleting,
		TTL:       p.TTL,
	}
}

// drain runs one check and reports its outcome and the cause of every
// error it saw.
func (p *scrapeProber) drain(ctx context.Context, c *scrape.Client, namespace string, selector labels.Selector) scrape.Verdict {
	obs := c.Observe(ctx, namespace, selector)
	v := scrape.Decide(obs)
	d := metrics.DrainCheck{Outcome: metrics.Outcome(v)}
	if obs.Err != nil {
		d.Causes = append(d.Causes, scrape.CauseOf(obs.Err))
	}
	for _, r := range obs.Pods {
		if r.Err != nil {
			d.Causes = append(d.Causes, scrape.CauseOf(r.Err))
		}
	}
	p.metrics.DrainChecked(d)
	return v
}
