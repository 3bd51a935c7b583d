package promcheck

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Client runs checks. It is safe for concurrent use; one per process keeps
// connections to each Prometheus between checks.
type Client struct {
	timeout time.Duration
	maxBody int64
	limiter *Limiter
	// verify and skipVerify carry the queries with and without
	// insecureSkipVerify; separate pools, so a connection made without
	// verifying is never reused by a query that asked for verification.
	verify, skipVerify http.RoundTripper
}

// New returns a Client; what no Option sets takes its default.
func New(opts ...Option) *Client {
	s := settings{timeout: DefaultTimeout, maxBody: DefaultMaxBodyBytes, limiter: processLimiter}
	for _, o := range opts {
		o(&s)
	}
	roots := rootPool(s.roots)
	return &Client{
		timeout:    s.timeout,
		maxBody:    s.maxBody,
		limiter:    s.limiter,
		verify:     newTransport(roots, false),
		skipVerify: newTransport(roots, true),
	}
}

// Run evaluates q's expression at time at (the zero time lets the server use
// its own clock) and decides the check. It returns within the Client's
// timeout, or ctx's deadline if sooner, wait for a query slot included; it
// never panics.
func (c *Client) Run(ctx context.Context, q v1alpha1.PrometheusQuery, creds Credentials, at time.Time) (out Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = failed(CausePanic, fmt.Sprintf("query failed: recovered from a panic: %v", r))
		}
		out.Message = finish(out.Message, creds)
	}()

	target, err := targetURL(q.URL)
	if err != nil {
		return failed(CauseConfig, "invalid query: "+err.Error())
	}
	if strings.TrimSpace(q.Expr) == "" {
		return failed(CauseConfig, "invalid query: the expression is empty")
	}

	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, &timeoutError{d: c.timeout})
	defer cancel()
	if ctx.Err() != nil {
		// Not the limiter's doing: the caller's time was up on arrival.
		cause, reason := ended(ctx)
		return failed(cause, "query "+reason)
	}
	if err := c.limiter.acquire(ctx); err != nil {
		_, reason := ended(ctx)
		return failed(CauseNoSlot, "no free query slot: all "+strconv.Itoa(c.limiter.Size())+
			" slots for Prometheus queries stayed taken until the check "+reason)
	}
	defer c.limiter.release()

	next := c.verify
	if q.InsecureSkipVerify {
		next = c.skipVerify
	}
	cl := &call{next: next, origin: origin(target), auth: creds.authorization(), limit: c.maxBody}
	client, err := api.NewClient(api.Config{
		Address: target.String(),
		Client:  &http.Client{Transport: cl, CheckRedirect: cl.checkRedirect},
	})
	if err != nil {
		return failed(CauseConfig, "invalid query: "+err.Error())
	}
	// The timeout parameter has Prometheus give up evaluating too, rather
	// than finish a query nobody waits for.
	v, warnings, err := v1.NewAPI(client).Query(ctx, q.Expr, at, v1.WithTimeout(serverTimeout(c.timeout)))
	if err != nil {
		return classify(ctx, cl, err)
	}
	return judge(v, warnings)
}

// serverTimeout rounds d up to what Prometheus parses: client_golang sends
// Duration.String, and Prometheus reads a float of seconds or its own
// duration syntax, which has no fractions, so "1.5s" would fail every query.
// Up, not down: the server should not give up before the client does.
func serverTimeout(d time.Duration) time.Duration {
	unit := time.Millisecond
	if d >= time.Second {
		unit = time.Second
	}
	if r := d % unit; r != 0 {
		d += unit - r
	}
	return d
}
