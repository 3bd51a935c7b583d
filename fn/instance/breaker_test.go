package instance_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestRunFunctionBreakerOpen: while Crossplane's circuit breaker for the
// instance is open (Responsive False), an edit of the claim is a dropped
// watch event, so the instance polls: every 5 s while its status moves,
// every 30 s once it rested a minute. At rest, lastReconciled is stamped
// again once the breaker has been open its 5 m, which closes it.
func TestRunFunctionBreakerOpen(t *testing.T) {
	at := func(d time.Duration) string { return authNow.Add(-d).Format(time.RFC3339) }
	ready := func(last, opened string) string {
		return `
phase: Ready
id: ` + derivedID + `
metadataReady: true
metadataEndpoint: ` + metadataEndpoint + `
gatewayReady: true
gatewayEndpoint: ` + gatewayEndpoint + `
observedGeneration: 0
lastReconciled: "` + last + `"
conditions:
- {type: MetadataReady, status: "True", reason: Ready}
- {type: GatewayReady, status: "True", reason: Ready}
- {type: Responsive, status: "False", reason: WatchCircuitOpen, lastTransitionTime: "` + opened + `"}
`
	}
	cases := map[string]struct {
		reason string
		status string
		last   string
		ttl    time.Duration
	}{
		"StatusMoving": {
			reason: "The status changes (Provisioning to Ready) under an open breaker: stamped, and polled in 5 s.",
			status: `{phase: Provisioning, id: ` + derivedID + `, lastReconciled: "` + at(10*time.Second) + `", conditions: [{type: Responsive, status: "False", reason: WatchCircuitOpen, lastTransitionTime: "` + at(time.Minute) + `"}]}`,
			last:   authNow.Format(time.RFC3339),
			ttl:    5 * time.Second,
		},
		"RecentlyRested": {
			reason: "Unchanged for less than a minute: not stamped, still polled in 5 s.",
			status: ready(at(30*time.Second), at(time.Minute)),
			last:   at(30 * time.Second),
			ttl:    5 * time.Second,
		},
		"AtRest": {
			reason: "Unchanged for two minutes, the breaker open for two: not stamped, polled in 30 s.",
			status: ready(at(2*time.Minute), at(2*time.Minute)),
			last:   at(2 * time.Minute),
			ttl:    30 * time.Second,
		},
		"Reprobe": {
			reason: "The breaker has been open past its 5 m: lastReconciled is stamped again, the status write that closes it.",
			status: ready(at(6*time.Minute), at(6*time.Minute)),
			last:   authNow.Format(time.RFC3339),
			ttl:    30 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := request{xr: xr(t, defaultSpec, tc.status), observed: observedRunning(t)}.build(t)
			rsp, err := function(noPassword(t)).RunFunction(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != tc.ttl {
				t.Errorf("%s\nTTL %s, want %s", tc.reason, got, tc.ttl)
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any) //nolint:forcetypeassert // Always written.
			if diff := cmp.Diff(tc.last, st["lastReconciled"], protocmp.Transform()); diff != "" {
				t.Errorf("%s\nlastReconciled: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
