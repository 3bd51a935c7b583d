package promcheck

// Cause says, from a small fixed set, why a check failed. It exists for the
// function's metrics: a Message quotes what a server sent, so it can never
// be a label, while a Cause can. A check that ran and returned no data has
// no Cause: the query answered, the answer was "not healthy".
type Cause string

// Causes. The set is closed: Run never reports anything else.
const (
	// CauseConfig: the query could not start (a URL that is not an
	// absolute http or https URL, carries userinfo, a query or a fragment;
	// an empty expression).
	CauseConfig Cause = "config"
	// CauseNoSlot: every process-wide query slot stayed taken until the
	// check ran out of time.
	CauseNoSlot Cause = "no_slot"
	// CauseTimeout: the per-query timeout or the caller's deadline cut the
	// query short.
	CauseTimeout Cause = "timeout"
	// CauseCanceled: the caller cancelled the query.
	CauseCanceled Cause = "canceled"
	// CauseTransport: the request could not be sent or its answer read
	// (DNS, connection refused, reset).
	CauseTransport Cause = "transport"
	// CauseTLS: the TLS handshake failed, most often an untrusted or
	// mismatched certificate.
	CauseTLS Cause = "tls"
	// CauseRedirect: the server redirected to another scheme, host or port,
	// or more than MaxRedirects times.
	CauseRedirect Cause = "redirect"
	// CauseHTTPStatus: the server (or a proxy in front of it) answered with
	// an HTTP error that is not a Prometheus API error, such as 401 or a
	// plain-text 503.
	CauseHTTPStatus Cause = "http_status"
	// CauseBodyTooLarge: the response exceeded the body limit.
	CauseBodyTooLarge Cause = "body_too_large"
	// CauseParse: the response was not a Prometheus API answer that could
	// be decoded.
	CauseParse Cause = "parse"
	// CauseAPIError: Prometheus answered with an error of its API (a bad
	// expression, an execution error, its own query timeout), whatever the
	// HTTP status.
	CauseAPIError Cause = "api_error"
	// CausePanic: running the query panicked and was recovered.
	CausePanic Cause = "panic"
)

// Causes lists every Cause, so a metric can be initialised for each.
var Causes = []Cause{CauseConfig, CauseNoSlot, CauseTimeout, CauseCanceled, CauseTransport,
	CauseTLS, CauseRedirect, CauseHTTPStatus, CauseBodyTooLarge, CauseParse, CauseAPIError, CausePanic}
