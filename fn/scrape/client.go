package scrape

import (
	"context"
	"net/http"
	"sort"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/crossplane/function-sdk-go/errors"
)

// Kube is the core/v1 client a Client lists pods and proxies through.
// client-go's typed CoreV1Interface is one; so is a REST client of core/v1
// alone (the kubectl plugin's), which spares a binary every other group of
// k8s.io/api.
type Kube interface {
	RESTClient() rest.Interface
}

// Client lists pods with a core/v1 client and scrapes their metrics. It is
// safe for concurrent use.
type Client struct {
	kube    Kube
	podIP   *http.Client
	opts    Options
	limiter *Limiter
	// port replaces MetricsPort only so tests can reach an httptest server in
	// PodIP mode; New always sets MetricsPort.
	port int
}

// A ClientOption configures a Client.
type ClientOption func(*Client)

// WithLimiter shares l with other Clients, so Options.MaxConcurrentScrapes
// bounds their scrapes together. Without it a Client bounds only its own.
func WithLimiter(l *Limiter) ClientOption {
	return func(c *Client) { c.limiter = l }
}

// New returns a Client. podIP is the HTTP client for ModePodIP; nil means
// NewPodIPHTTPClient(). Whatever the client, redirects are never followed.
// Option fields left zero take their defaults. An unknown Mode is not an
// error here: every check then fails closed with a cause that says so, as the
// original's always-error scraper did.
func New(kube Kube, podIP *http.Client, o Options, co ...ClientOption) *Client {
	if podIP == nil {
		podIP = NewPodIPHTTPClient()
	}
	c := &Client{kube: kube, podIP: podIP, opts: o.withDefaults(), port: MetricsPort}
	for _, fn := range co {
		fn(c)
	}
	if c.limiter == nil {
		c.limiter = NewLimiter()
	}
	return c
}

// Drain lists the pods selector names in namespace, scrapes every Running
// one, and decides. It never returns later than the overall timeout after it
// is called, and never panics on anything a pod or the API server sends.
func (c *Client) Drain(ctx context.Context, namespace string, selector labels.Selector) Verdict {
	return Decide(c.Observe(ctx, namespace, selector))
}

// Observe lists and scrapes as Drain does and returns what it saw.
func (c *Client) Observe(ctx context.Context, namespace string, selector labels.Selector) Observation {
	ctx, cancel := context.WithTimeoutCause(ctx, c.opts.OverallTimeout,
		errors.Errorf("drain check exceeded its overall timeout of %s", c.opts.OverallTimeout))
	defer cancel()

	// An empty selector would scrape every pod in the namespace and let an
	// unrelated pod hold (or release) the drain.
	if selector == nil || selector.Empty() {
		return Observation{Err: withCause(CauseConfig, errors.New("cannot check drain: empty pod label selector"))}
	}
	t, err := c.transport()
	if err != nil {
		return Observation{Err: withCause(CauseConfig, errors.Wrap(err, "cannot check drain"))}
	}
	list, err := c.listPods(ctx, namespace, selector)
	if err != nil {
		cause := CauseList
		if ctx.Err() != nil {
			err, cause = context.Cause(ctx), CauseTimeout
		}
		return Observation{Err: withCause(cause, errors.Wrapf(err, "cannot list pods with selector %s", selector))}
	}

	var running []*corev1.Pod
	var skipped []string
	for i := range list.Items {
		p := &list.Items[i]
		if p.Status.Phase != corev1.PodRunning {
			skipped = append(skipped, p.Name)
			continue
		}
		running = append(running, p)
	}
	sort.Slice(running, func(i, j int) bool { return running[i].Name < running[j].Name })
	sort.Strings(skipped)
	return Observation{Pods: c.scrapeAll(ctx, t, running), Skipped: skipped}
}

// listPods lists the pods selector names, as the typed client's List
// does: one GET of the pods collection, the selector a query parameter.
func (c *Client) listPods(ctx context.Context, namespace string, selector labels.Selector) (*corev1.PodList, error) {
	rc, err := restClient(c.kube)
	if err != nil {
		return nil, err
	}
	list := &corev1.PodList{}
	err = rc.Get().Namespace(namespace).Resource("pods").Param("labelSelector", selector.String()).Do(ctx).Into(list)
	return list, err
}

// restClient is kube's core/v1 REST client, or why there is none: the one
// check both the pod list and the pods/proxy transport rely on.
func restClient(kube Kube) (rest.Interface, error) {
	if kube == nil {
		return nil, errors.New("no Kubernetes client configured")
	}
	rc := kube.RESTClient()
	if p, ok := rc.(*rest.RESTClient); rc == nil || ok && p == nil {
		return nil, errors.New("the Kubernetes client has no REST client")
	}
	return rc, nil
}

func (c *Client) transport() (transport, error) {
	switch c.opts.Mode {
	case ModeApiserverProxy:
		return apiserverProxy(c.kube, c.port)
	case ModePodIP:
		if c.kube == nil {
			return transport{}, errors.New("no Kubernetes client configured")
		}
		return podIP(c.podIP, c.port), nil
	default:
		return transport{}, errors.Errorf("unknown metric scrape mode %q, want %q or %q", c.opts.Mode, ModeApiserverProxy, ModePodIP)
	}
}

type scraped struct {
	i   int
	q   Queries
	err error
}

// scrapeAll scrapes pods with at most Concurrency requests in flight and
// returns one result per pod, in the pods' order. It stops waiting when ctx
// ends, even for a request some transport fails to abandon: such a straggler
// writes into a buffered channel nobody reads and exits on its own.
func (c *Client) scrapeAll(ctx context.Context, t transport, pods []*corev1.Pod) []PodResult {
	if len(pods) == 0 {
		return nil
	}
	jobs := make(chan int, len(pods))
	for i := range pods {
		jobs <- i
	}
	close(jobs)
	out := make(chan scraped, len(pods))
	// Whether a pod still waited for a process-wide slot when time ran out
	// tells the user which bound to raise.
	waiting := make([]atomic.Bool, len(pods))
	for range min(c.opts.Concurrency, len(pods)) {
		go func() {
			for i := range jobs {
				q, err := c.scrapeLimited(ctx, t, pods[i], &waiting[i])
				out <- scraped{i: i, q: q, err: err}
			}
		}()
	}

	results := make([]PodResult, len(pods))
	done := make([]bool, len(pods))
	record := func(s scraped) {
		results[s.i] = PodResult{Pod: pods[s.i].Name, Running: s.q.Running, Suspended: s.q.Suspended, Err: s.err}
		done[s.i] = true
	}
	for n := 0; n < len(pods); n++ {
		select {
		case s := <-out:
			record(s)
			continue
		case <-ctx.Done():
		}
		// Out of time: keep what already arrived, the rest timed out.
		for drained := false; !drained; {
			select {
			case s := <-out:
				record(s)
			default:
				drained = true
			}
		}
		err := withCause(CauseTimeout, errors.Wrap(context.Cause(ctx), "cannot scrape metrics"))
		for i := range results {
			switch {
			case done[i]:
			case waiting[i].Load():
				results[i] = PodResult{Pod: pods[i].Name, Err: c.noSlot(context.Cause(ctx))}
			default:
				results[i] = PodResult{Pod: pods[i].Name, Err: err}
			}
		}
		break
	}
	return results
}

// scrapeLimited scrapes once one of the process-wide slots is free. The
// wait counts against the check's overall timeout (and the caller's
// deadline), not the pod's: a pod is not slow for waiting its turn.
// waiting is true while the pod waits for its slot.
func (c *Client) scrapeLimited(ctx context.Context, t transport, pod *corev1.Pod, waiting *atomic.Bool) (Queries, error) {
	waiting.Store(true)
	err := c.limiter.acquire(ctx, c.opts.MaxConcurrentScrapes)
	if err != nil {
		// Left true: the check ended while this pod waited.
		return Queries{}, c.noSlot(err)
	}
	waiting.Store(false)
	defer c.limiter.release()
	return c.scrapeRecovered(ctx, t, pod)
}

func (c *Client) noSlot(cause error) error {
	return withCause(CauseNoSlot, errors.Wrapf(cause, "cannot scrape metrics: no free slot among the %d process-wide scrapes (spec.scrape.maxConcurrentScrapes)", c.opts.MaxConcurrentScrapes))
}

// scrapeRecovered is scrapeOne in a scrape goroutine, where a panic (in a
// transport, in a parser, on a body nobody foresaw) would end the whole
// process: it becomes this pod's scrape error instead, so the generation is
// held, not deleted, and every other tenant carries on.
func (c *Client) scrapeRecovered(ctx context.Context, t transport, pod *corev1.Pod) (q Queries, err error) {
	defer func() {
		if r := recover(); r != nil {
			q, err = Queries{}, withCause(CausePanic, errors.Errorf("cannot scrape metrics: recovered from a panic: %v", r))
		}
	}()
	return c.scrapeOne(ctx, t, pod)
}

func (c *Client) scrapeOne(ctx context.Context, t transport, pod *corev1.Pod) (Queries, error) {
	if ctx.Err() != nil {
		return Queries{}, withCause(CauseTimeout, errors.Wrap(context.Cause(ctx), "cannot scrape metrics"))
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.opts.PodTimeout,
		errors.Errorf("per-pod timeout of %s exceeded", c.opts.PodTimeout))
	defer cancel()
	body, contentType, err := t.fetch(ctx, pod, c.opts.MaxBodyBytes)
	if err != nil {
		// The transport's own words for a cancelled request vary by where
		// it was cut; the cause says which limit did it.
		cause := CauseTransport
		if ctx.Err() != nil {
			err, cause = context.Cause(ctx), CauseTimeout
		}
		return Queries{}, withCause(cause, errors.Wrap(err, "cannot scrape metrics"))
	}
	q, err := Parse(body, contentType, c.opts.MaxBodyBytes)
	if err != nil {
		return Queries{}, withCause(CauseParse, errors.Wrap(err, "cannot parse metrics"))
	}
	return q, nil
}
