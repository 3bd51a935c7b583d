package scrape

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
)

// TestDrainMetricsBomb serves hostile bodies through the pods/proxy path, as
// a pod could: delimited-protobuf length prefixes that claim far more than
// the body, and bodies of tiny samples that cost far more to decode than
// their size. None may panic, each gets the verdict it deserves, and the
// whole check allocates a small multiple of the body limit at most, never
// what a prefix claims or what decoding everything would cost. Not
// parallel: the allocation count is the whole process's.
func TestDrainMetricsBomb(t *testing.T) {
	const limit = 1 << 20
	// Generous for the HTTP and list machinery, far below the claims.
	const maxAlloc = 8 * limit
	claimed := func(n uint64) string {
		return fmt.Sprintf("pod e-g1-0: cannot parse metrics: cannot decode protobuf metrics: message 0 claims %d bytes, more than the limit of %d bytes", n, limit)
	}
	// Bodies just under the limit of the smallest samples there are, where
	// decoding costs the most per byte: tens of times the body.
	manyText := strings.Repeat("o 0\n", (limit-1024)/4) + metricsText("0", "0")
	manyProto := protoFamily(t, &dto.MetricFamily{Name: proto.String("o"), Metric: make([]*dto.Metric, (limit-1024)/2)}) +
		protoBody(t, metricsText("0", "0"))
	gaugeFlood := protoFamily(t, &dto.MetricFamily{Name: proto.String(RunningQueriesMetric), Metric: make([]*dto.Metric, (limit-1024)/2)}) +
		protoBody(t, metricsText("0", "0"))
	textFlood := strings.Repeat("firebolt_running_queries 0\n", (limit-1024)/27) + metricsText("0", "0")
	cases := map[string]struct {
		reason      string
		contentType string
		body        string
		want        Verdict
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
		"ManySmallSamplesText": {
			reason:      "A body of a quarter million samples of another family decodes only the gauges.",
			contentType: textPlain,
			body:        manyText,
			want:        Verdict{Drained: true},
		},
		"ManySmallSamplesProtobuf": {
			reason: "Half a million empty samples of another family are never decoded.",
			body:   manyProto,
			want:   Verdict{Drained: true},
		},
		"GaugeFloodProtobuf": {
			reason: "Half a million empty samples of a gauge are refused before they are decoded.",
			body:   gaugeFlood,
			want: Verdict{Failing: true, Message: "pod e-g1-0: cannot parse metrics: cannot decode protobuf metrics: " +
				"the messages naming firebolt_running_queries and firebolt_suspended_queries exceed 65536 bytes"},
		},
		"GaugeFloodText": {
			reason:      "Forty thousand lines of a gauge are refused before they are decoded.",
			contentType: textPlain,
			body:        textFlood,
			want: Verdict{Failing: true, Message: "pod e-g1-0: cannot parse metrics: " +
				"the lines naming firebolt_running_queries and firebolt_suspended_queries exceed 65536 bytes"},
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
			ct := tc.contentType
			if ct == "" {
				ct = protoContentType
			}
			f.proxy = map[string]http.HandlerFunc{"e-g1-0": serveMetrics(ct, tc.body)}
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
