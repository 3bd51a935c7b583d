package scrape

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestDrainMetricsBomb serves delimited-protobuf bodies whose length prefix
// claims far more than the body through the pods/proxy path, as a hostile
// pod could. Each must end as that pod's "failing" verdict, without a panic,
// and the whole check must allocate a small multiple of the body limit at
// most, never what the prefix claims. Not parallel: the allocation count is
// the whole process's.
func TestDrainMetricsBomb(t *testing.T) {
	const limit = 1 << 20
	// Generous for the HTTP and list machinery, far below the claims.
	const maxAlloc = 8 * limit
	claimed := func(n uint64) string {
		return fmt.Sprintf("pod e-g1-0: cannot parse metrics: cannot decode protobuf metrics: message 0 claims %d bytes, more than the limit of %d bytes", n, limit)
	}
	cases := map[string]struct {
		reason string
		body   string
		want   Verdict
	}{
		"Near2To63": {
			reason: "expfmt's decoder panics in makeslice on this prefix.",
			body:   lengthPrefix(math.MaxInt64, "\x0a\x01a"),
			want:   Verdict{Failing: true, Message: claimed(math.MaxInt64)},
		},
		"OneTiB": {
			reason: "expfmt's decoder allocates a TiB for this prefix.",
			body:   lengthPrefix(1<<40, "\x0a\x01a"),
			want:   Verdict{Failing: true, Message: claimed(1 << 40)},
		},
		"OneGiB": {
			reason: "expfmt's decoder allocates a GiB for this prefix; it must not even reach the limit.",
			body:   lengthPrefix(1<<30, "\x0a\x01a"),
			want:   Verdict{Failing: true, Message: claimed(1 << 30)},
		},
		"JustAboveLimit": {
			reason: "One byte above the limit is refused by the limit.",
			body:   lengthPrefix(limit+1, "\x0a\x01a"),
			want:   Verdict{Failing: true, Message: claimed(limit + 1)},
		},
		"WithinLimitShortBody": {
			reason: "A claim within the limit but beyond the body is refused without a buffer of that size.",
			body:   lengthPrefix(limit, "\x0a\x01a"),
			want: Verdict{Failing: true, Message: fmt.Sprintf(
				"pod e-g1-0: cannot parse metrics: cannot decode protobuf metrics: message 0 claims %d bytes, but the body ends 3 bytes later", limit)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeAPI(t, []corev1.Pod{pod("e-g1-0", corev1.PodRunning)}, nil)
			f.proxy = map[string]http.HandlerFunc{"e-g1-0": serveMetrics(protoContentType, tc.body)}
			c := f.client(t, Options{PodTimeout: testOptions.PodTimeout, OverallTimeout: testOptions.OverallTimeout, MaxBodyBytes: limit})

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got := c.Drain(context.Background(), testNamespace, testSelector)
			runtime.ReadMemStats(&after)

			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDrain: -want, +got:\n%s", tc.reason, diff)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > maxAlloc {
				t.Errorf("%s\nDrain allocated %d bytes, want at most %d", tc.reason, n, maxAlloc)
			} else {
				t.Logf("Drain allocated %d bytes", n)
			}
			if got := f.scrapedOnce(); !cmp.Equal(got, []string{"e-g1-0"}) {
				t.Errorf("scraped %v, want the bomb to have been served to the check", got)
			}
		})
	}
}
