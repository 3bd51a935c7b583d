package engine

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// errNoKube is what both live signals report without cluster access.
const errNoKube = "no Kubernetes client configured"

// NewProber returns a DrainProber that scrapes through fn/scrape with kube.
// kube may be nil: every check then fails with errNoKube, which the
// composer reports as DrainCheckFailing. Scrape clients are kept per
// option set, so concurrent calls share connections, and all of them share
// one Limiter: the function input's maxConcurrentScrapes bounds the scrapes
// of every composite the process serves, not of one call.
func NewProber(kube corev1client.CoreV1Interface, o ...ProberOption) DrainProber {
	p := &scrapeProber{kube: kube, clients: map[scrape.Options]*scrape.Client{}, limiter: scrape.NewLimiter(), metrics: metrics.Nop{}}
	for _, fn := range o {
		fn(p)
	}
	return p
}

type scrapeProber struct {
	kube    corev1client.CoreV1Interface
	mu      sync.Mutex
	clients map[scrape.Options]*scrape.Client
	limiter *scrape.Limiter
	metrics metrics.Recorder
}

func (p *scrapeProber) Drain(ctx context.Context, namespace string, selector labels.Selector, o scrape.Options) scrape.Verdict {
	if p.kube == nil {
		p.metrics.DrainChecked(metrics.DrainCheck{Outcome: metrics.DrainFailing, Causes: []scrape.Cause{scrape.CauseConfig}})
		return scrape.Verdict{Failing: true, Message: errNoKube}
	}
	return p.drain(ctx, p.client(o), namespace, selector)
}

// Activity scrapes the pods for auto-stop with the same clients and limiter
// as drain checks.
func (p *scrapeProber) Activity(ctx context.Context, namespace string, selector labels.Selector, o scrape.Options) scrape.Observation {
	if p.kube == nil {
		return scrape.Observation{Err: errors.New(errNoKube)}
	}
	return p.client(o).Observe(ctx, namespace, selector)
}

// client is the scrape client for one option set, made on first use.
func (p *scrapeProber) client(o scrape.Options) *scrape.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.clients[o]
	if !ok {
		c = scrape.New(p.kube, nil, o, scrape.WithLimiter(p.limiter))
		p.clients[o] = c
	}
	return c
}
