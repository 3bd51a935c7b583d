package envoyconfig

import "time"

const (
	// drainedHeader marks the 503 an engine sends from its shutdown fence,
	// before it has done any work for the request.
	drainedHeader = "X-Firebolt-Drained"

	previousHostsPredicateName = "envoy.retry_host_predicates.previous_hosts"
)

// retryOn lists only failures where the engine cannot have started the
// query, so a retry cannot repeat a side effect: no connection, HTTP/2
// REFUSED_STREAM, a reset before any response, and the drained 503. Plain
// 5xx and gateway-error are left out on purpose: an engine's own 5xx may
// follow a partly applied statement.
const retryOn = "connect-failure,refused-stream,reset,retriable-headers"

// retryPolicy sweeps the engine's pods: many attempts, each to a pod not
// tried yet, with a short backoff so DNS refresh and health-check ejection
// can catch up. No per-try timeout, so long queries are never cut off.
func newRetryPolicy() *retryPolicy {
	return &retryPolicy{
		RetryOn:    retryOn,
		NumRetries: 50,
		RetriableHeaders: []headerMatcher{{
			Name:         drainedHeader,
			PresentMatch: true,
		}},
		RetryBackOff: retryBackOff{
			BaseInterval: dur(25 * time.Millisecond),
			MaxInterval:  dur(250 * time.Millisecond),
		},
		RetryHostPredicate: []retryHostPredicate{{
			Name:        previousHostsPredicateName,
			TypedConfig: typeOf("envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate"),
		}},
		HostSelectionRetryMaxAttempts: 5,
	}
}
