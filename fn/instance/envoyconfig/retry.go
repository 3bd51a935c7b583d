package envoyconfig

import (
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	previoushostsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

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
func retryPolicy(t *typer) *routev3.RetryPolicy {
	return &routev3.RetryPolicy{
		RetryOn:    retryOn,
		NumRetries: wrapperspb.UInt32(50),
		RetriableHeaders: []*routev3.HeaderMatcher{{
			Name:                 drainedHeader,
			HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: true},
		}},
		RetryBackOff: &routev3.RetryPolicy_RetryBackOff{
			BaseInterval: durationpb.New(25 * time.Millisecond),
			MaxInterval:  durationpb.New(250 * time.Millisecond),
		},
		RetryHostPredicate: []*routev3.RetryPolicy_RetryHostPredicate{{
			Name:       previousHostsPredicateName,
			ConfigType: &routev3.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: t.any(&previoushostsv3.PreviousHostsPredicate{})},
		}},
		HostSelectionRetryMaxAttempts: 5,
	}
}
