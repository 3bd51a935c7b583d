package promcheck

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// newTransport returns the transport of every query of one Client that
// verifies (or, insecure, skips verifying) the server's certificate, so
// connections are kept between checks. roots nil means the system's.
//
// No proxy from the environment: a plain-HTTP proxy would see the
// Authorization header, and credentials go to the configured host only.
func newTransport(roots *x509.CertPool, insecure bool) *http.Transport {
	return &http.Transport{
		TLSClientConfig: &tls.Config{
			RootCAs:            roots,
			MinVersion:         tls.VersionTLS12,
			InsecureSkipVerify: insecure, //nolint:gosec // G402: opt-in per query, documented on PrometheusQuery.
		},
		ForceAttemptHTTP2: true,
		IdleConnTimeout:   90 * time.Second,
	}
}

// rootPool adds certs to the system's roots; nil certs keeps the system's.
func rootPool(certs []*x509.Certificate) *x509.CertPool {
	if len(certs) == 0 {
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		// Without system roots the added ones can still be trusted.
		pool = x509.NewCertPool()
	}
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool
}

// targetURL checks a PrometheusQuery URL again at call time: admission
// refuses the same, but a composite can be written around it, and a URL
// with userinfo would send credentials nobody reviewed. Errors never quote
// the URL, which might hold such userinfo.
func targetURL(raw string) (*url.URL, error) {
	if hostOnly.MatchString(raw) {
		// host[:port][/path], as the seed's own example (prom:9000/xx)
		// writes it: plain HTTP, as Prometheus serves by default.
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("the URL cannot be parsed")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("the URL must be an absolute http or https URL")
	case u.Opaque != "" || u.Hostname() == "":
		return nil, errors.New("the URL must name a host")
	case u.User != nil:
		return nil, errors.New("the URL must not carry credentials: name a Secret in secretRef instead")
	case u.RawQuery != "" || u.ForceQuery:
		return nil, errors.New("the URL must have no query: the function appends /api/v1/query")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, errors.New("the URL must have no fragment")
	}
	return u, nil
}

// hostOnly is a URL without a scheme: a host name or IPv4 address, an
// optional port and an optional path without query or fragment. It is the
// same pattern as the schema's.
var hostOnly = regexp.MustCompile(v1alpha1.SchemelessPrometheusURL)

// origin is the scheme, host and port a request goes to, with the scheme's
// default port made explicit, so http://h and http://h:80 compare equal.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// bodyTooLargeError says a response exceeded the body limit.
type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string {
	return "the response body exceeds the limit of " + strconv.FormatInt(e.limit, 10) + " bytes"
}

// redirectError says why a redirect was not followed.
type redirectError struct{ reason string }

func (e *redirectError) Error() string { return e.reason }

// call is the RoundTripper of one Run. It adds the credentials, bounds the
// body and remembers what the last response was, which client_golang's
// errors do not always say.
type call struct {
	next   http.RoundTripper
	origin string
	// auth is the Authorization header value, "" for none.
	auth  string
	limit int64
	// status of the last response, 0 before one.
	status atomic.Int64
	// bodyRead is set once the last response's body was read to its end, so
	// an error after it is about what the body said, not how it arrived.
	bodyRead atomic.Bool
}

func (c *call) RoundTrip(req *http.Request) (*http.Response, error) {
	// CheckRedirect already refuses other origins; this is the second
	// lock, so credentials reach the configured server only, whatever the
	// redirect policy becomes.
	if c.auth != "" && origin(req.URL) == c.origin {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	c.status.Store(int64(resp.StatusCode))
	c.bodyRead.Store(false)
	if resp.ContentLength > c.limit {
		_ = resp.Body.Close()
		return nil, &bodyTooLargeError{limit: c.limit}
	}
	resp.Body = &limitedBody{r: resp.Body, left: c.limit, done: &c.bodyRead, limit: c.limit}
	return resp, nil
}

// checkRedirect follows at most MaxRedirects redirects, each to the
// configured origin. Go would drop the Authorization header on the way to
// another host, but would still send the query there. A 307 or 308 keeps
// client_golang's POST; a 301, 302 or 303 turns it into a GET without the
// form, which Prometheus answers with a bad_data error (an api_error).
func (c *call) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return &redirectError{reason: "stopped after " + strconv.Itoa(MaxRedirects) + " redirects"}
	}
	if o := origin(req.URL); o != c.origin {
		return &redirectError{reason: "refused a redirect to " + req.URL.Scheme + "://" + req.URL.Host +
			": only redirects to the configured scheme, host and port are followed"}
	}
	return nil
}

// limitedBody fails a body longer than limit instead of cutting it: a cut
// vector would decode as fewer series, or as none.
type limitedBody struct {
	r     io.ReadCloser
	left  int64
	limit int64
	done  *atomic.Bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		// At the limit: one more byte means too large, EOF means exactly it.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			return 0, &bodyTooLargeError{limit: b.limit}
		}
		b.markEOF(err)
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	b.markEOF(err)
	return n, err
}

func (b *limitedBody) markEOF(err error) {
	if errors.Is(err, io.EOF) {
		b.done.Store(true)
	}
}

func (b *limitedBody) Close() error { return b.r.Close() }
