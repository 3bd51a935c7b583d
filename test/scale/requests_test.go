package scale

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const apiserverMetrics = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 12
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 3
apiserver_request_total{code="201",component="apiserver",dry_run="",group="compute.firebolt.io",resource="fireboltengines",scope="resource",subresource="",verb="APPLY",version="v1alpha1"} 25
apiserver_request_total{code="200",component="apiserver",dry_run="",group="compute.firebolt.io",resource="fireboltengines",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 40
apiserver_request_total{code="409",component="apiserver",dry_run="",group="compute.firebolt.io",resource="fireboltengines",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 2
apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="/metrics",verb="GET",version=""} 7
# HELP apiserver_request_duration_seconds [STABLE] Response latency.
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{verb="GET",le="0.1"} 1
apiserver_request_duration_seconds_bucket{verb="GET",le="+Inf"} 1
apiserver_request_duration_seconds_sum{verb="GET"} 0.01
apiserver_request_duration_seconds_count{verb="GET"} 1
`

var (
	podsList    = Key{Resource: "pods", Verb: "LIST"}
	engineApply = Key{Group: "compute.firebolt.io", Resource: "fireboltengines", Verb: "APPLY"}
	statusPut   = Key{Group: "compute.firebolt.io", Resource: "fireboltengines", Subresource: "status", Verb: "PUT"}
)

func TestParseRequests(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    Counts
		wantErr string
	}{
		"SumsCodesAndScopesLeavesOutNonResource": {
			in:   apiserverMetrics,
			want: Counts{podsList: 15, engineApply: 25, statusPut: 42},
		},
		"NoRequestCounter": {
			in:      "# TYPE up gauge\nup 1\n",
			wantErr: "have no apiserver_request_total",
		},
		"NotACounter": {
			in:      "# TYPE apiserver_request_total gauge\napiserver_request_total{verb=\"GET\",resource=\"pods\"} 1\n",
			wantErr: "is a GAUGE, not a counter",
		},
		"Malformed": {
			in:      "apiserver_request_total{verb=\"GET\" 1\n",
			wantErr: "cannot parse",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRequests(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseRequests(...): want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseRequests(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestSumCounter(t *testing.T) {
	in := "# TYPE circuit_breaker_opens_total counter\n" +
		"circuit_breaker_opens_total{controller=\"composite/a\"} 2\n" +
		"circuit_breaker_opens_total{controller=\"composite/b\"} 3\n" +
		"# TYPE other_total counter\nother_total 9\n"
	for name, tc := range map[string]struct {
		metric string
		want   float64
	}{
		"SumsSeries":   {"circuit_breaker_opens_total", 5},
		"AbsentIsZero": {"never_seen_total", 0},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := SumCounter(strings.NewReader(in), tc.metric)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("SumCounter(%q): want %g, got %g", tc.metric, tc.want, got)
			}
		})
	}
}

func TestSub(t *testing.T) {
	cases := map[string]struct {
		after, before Counts
		want          Counts
		wantErr       string
	}{
		"DeltaWithoutUnmoved": {
			after:  Counts{podsList: 20, engineApply: 25, statusPut: 50},
			before: Counts{podsList: 15, engineApply: 25},
			want:   Counts{podsList: 5, statusPut: 50},
		},
		"CounterWentDown": {
			after:   Counts{podsList: 3},
			before:  Counts{podsList: 15},
			wantErr: "pods LIST went down from 15 to 3",
		},
		"CounterDisappeared": {
			after:   Counts{},
			before:  Counts{statusPut: 1},
			wantErr: "fireboltengines.compute.firebolt.io/status PUT disappeared",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Sub(tc.after, tc.before)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Sub(...): want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Sub(...): -want, +got:\n%s", diff)
			}
		})
	}
}

func TestWithoutAndTotals(t *testing.T) {
	c := Counts{podsList: 10, engineApply: 25, statusPut: 4}
	got := c.Without(Counts{podsList: 7, statusPut: 6})
	want := Counts{podsList: 3, engineApply: 25}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Without(...): -want, +got:\n%s", diff)
	}
	if all, writes := c.Total(false), c.Total(true); all != 39 || writes != 29 {
		t.Errorf("Total: want 39 requests and 29 writes, got %g and %g", all, writes)
	}
}

func TestKeysOrder(t *testing.T) {
	// Most requests over all phases first (statusPut 6), ties by name
	// (engineApply and podsList 5 each).
	got := Keys(Counts{podsList: 1, statusPut: 6}, Counts{podsList: 4, engineApply: 5})
	want := []Key{statusPut, engineApply, podsList}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Keys(...): -want, +got:\n%s", diff)
	}
}
