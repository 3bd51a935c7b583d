package scale

import (
	"maps"
	"net/http"
	"strings"
	"sync"
)

// Classify names a request as the API server's apiserver_request_total
// would: the group, resource and subresource its path addresses and the
// verb the API server records (LIST for a GET of a collection, WATCH for a
// watch, APPLY for a server-side apply, DELETECOLLECTION for a DELETE of a
// collection). ok is false for a request for no resource (/metrics,
// /readyz, discovery), which ParseRequests leaves out too.
func Classify(method, path, rawQuery, contentType string) (k Key, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api, version
	case len(parts) >= 4 && parts[0] == "apis":
		k.Group = parts[1]
		parts = parts[3:] // apis, group, version
	default:
		return Key{}, false
	}
	watch := false
	if parts[0] == "watch" {
		// The deprecated /watch/ path prefix.
		watch, parts = true, parts[1:]
	}
	// As the API server reads it: namespaces/<ns>/<resource>/..., except
	// a namespace's own subresources (status, finalize).
	if len(parts) > 2 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:]
	}
	if len(parts) == 0 || parts[0] == "" {
		return Key{}, false
	}
	k.Resource = parts[0]
	named := len(parts) > 1
	if len(parts) > 2 {
		k.Subresource = parts[2]
	}
	for _, q := range strings.Split(rawQuery, "&") {
		if q == "watch=true" || q == "watch=1" {
			watch = true
		}
	}
	switch method {
	case http.MethodGet:
		switch {
		case watch:
			k.Verb = "WATCH"
		case named:
			k.Verb = "GET"
		default:
			k.Verb = "LIST"
		}
	case http.MethodPatch:
		k.Verb = "PATCH"
		if strings.HasPrefix(contentType, "application/apply-patch") {
			k.Verb = "APPLY"
		}
	case http.MethodDelete:
		k.Verb = "DELETE"
		if !named {
			k.Verb = "DELETECOLLECTION"
		}
	default:
		k.Verb = method
	}
	return k, true
}

// Own counts the requests the harness makes, so that the report can show
// only what the product and the control plane asked for. Wrap it around the
// harness's clients' transport.
type Own struct {
	mu sync.Mutex
	n  Counts
}

// NewOwn returns an empty count.
func NewOwn() *Own { return &Own{n: Counts{}} }

// Wrap returns rt counting every request that goes through it.
func (o *Own) Wrap(rt http.RoundTripper) http.RoundTripper { return &counting{own: o, rt: rt} }

// Snapshot is the count so far.
func (o *Own) Snapshot() Counts {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

type counting struct {
	own *Own
	rt  http.RoundTripper
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	if k, ok := Classify(r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type")); ok {
		c.own.mu.Lock()
		c.own.n[k]++
		c.own.mu.Unlock()
	}
	return c.rt.RoundTrip(r)
}

// WrappedRoundTripper lets client-go reach the transport underneath, as it
// does to cancel a request that timed out.
func (c *counting) WrappedRoundTripper() http.RoundTripper { return c.rt }
