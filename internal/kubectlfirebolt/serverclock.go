package kubectlfirebolt

import (
	"net/http"
	"sync"
	"time"
)

// serverClock is the API server's clock as its responses' Date headers
// tell it. The function judges a wake stamp by the cluster's time and
// ignores one more than five minutes off, so a stamp taken from a laptop
// whose clock is wrong would be printed as requested and then ignored.
type serverClock struct {
	mu     sync.Mutex
	offset time.Duration
	seen   bool
	// local is the local clock; nil is time.Now.
	local func() time.Time
}

func (c *serverClock) localNow() time.Time {
	if c.local == nil {
		return time.Now()
	}
	return c.local()
}

// observe records the server's time from a response's Date header, which
// has one-second precision: the offset is rounded to whole seconds so a
// clock in step is not moved by the truncation.
func (c *serverClock) observe(h http.Header) {
	d, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return
	}
	off := d.Sub(c.localNow()).Round(time.Second)
	c.mu.Lock()
	c.offset, c.seen = off, true
	c.mu.Unlock()
}

// Now is the server's time when a response has told it, else the local
// time.
func (c *serverClock) Now() time.Time {
	c.mu.Lock()
	off, seen := c.offset, c.seen
	c.mu.Unlock()
	if !seen {
		return c.localNow()
	}
	return c.localNow().Add(off)
}

// wrap is a rest.Config WrapTransport that observes every response.
func (c *serverClock) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil {
			c.observe(resp.Header)
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
