package promcheck

import (
	"crypto/x509"
	"time"
)

// Defaults of a Client built without the matching Option.
const (
	// DefaultTimeout bounds one check, its wait for a slot included, well
	// under Crossplane's two-minute budget for a whole function call.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxBodyBytes is far above what a check's expression should
	// return (a handful of series); a larger answer is not a health check.
	DefaultMaxBodyBytes int64 = 1 << 20
	// DefaultMaxConcurrentQueries bounds the queries in flight in the whole
	// process, so it holds at most this many bodies of DefaultMaxBodyBytes.
	DefaultMaxConcurrentQueries = 8
)

// MaxRedirects is how many redirects a query follows, each to the
// configured scheme, host and port only.
const MaxRedirects = 3

// An Option configures a Client.
type Option func(*settings)

type settings struct {
	timeout time.Duration
	maxBody int64
	limiter *Limiter
	roots   []*x509.Certificate
}

// WithTimeout bounds each Run, its wait for a slot included; d below or at
// zero keeps DefaultTimeout.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.timeout = d
		}
	}
}

// WithMaxBodyBytes bounds each response body; n below 1 keeps
// DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(s *settings) {
		if n > 0 {
			s.maxBody = n
		}
	}
}

// WithLimiter bounds the Client's queries with l instead of the process-wide
// Limiter of DefaultMaxConcurrentQueries slots.
func WithLimiter(l *Limiter) Option {
	return func(s *settings) {
		if l != nil {
			s.limiter = l
		}
	}
}

// WithRootCAs trusts certs as certificate authorities, on top of the
// system's roots, for servers with a private CA.
func WithRootCAs(certs ...*x509.Certificate) Option {
	return func(s *settings) { s.roots = append(s.roots, certs...) }
}
