package perf

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn"
)

// TestExampleRequestIsTheStableEngine builds the harness's request from
// the stable-engine example against the function in process, and wants
// what Crossplane would get there: the claim and the instance resolved, the
// engine stable, the generation's three objects and the routing Service.
func TestExampleRequestIsTheStableEngine(t *testing.T) {
	ex, err := LoadExample("../../examples/render/engine-stable")
	if err != nil {
		t.Fatal(err)
	}
	f := fn.New(logging.NewNopLogger(), nil)
	call := func(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
		return f.RunFunction(ctx, req)
	}
	req, err := ex.Request(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"claim", "instance"} {
		if n := len(req.GetRequiredResources()[name].GetItems()); n != 1 {
			t.Errorf("required %s: want 1 item, got %d", name, n)
		}
	}
	rsp, err := call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if phase := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["phase"]; phase != "stable" {
		t.Errorf("phase: want stable, got %v; results %v", phase, rsp.GetResults())
	}
	got := make([]string, 0, len(rsp.GetDesired().GetResources()))
	for name := range rsp.GetDesired().GetResources() {
		got = append(got, name)
	}
	want := []string{"g0-config", "g0-headless", "g0-statefulset", "service"}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("desired resources, -want, +got:\n%s", diff)
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		out := make([]time.Duration, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	cases := map[string]struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		"Empty":    {in: nil, p: 50, want: 0},
		"One":      {in: ms(7), p: 99, want: 7 * time.Millisecond},
		"Median":   {in: ms(5, 1, 4, 2, 3), p: 50, want: 3 * time.Millisecond},
		"P99Of100": {in: ms(100, 99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82, 81, 80, 79, 78, 77, 76, 75, 74, 73, 72, 71, 70, 69, 68, 67, 66, 65, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), p: 99, want: 99 * time.Millisecond},
		"Max":      {in: ms(1, 2, 3), p: 100, want: 3 * time.Millisecond},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Percentile(tc.in, tc.p); got != tc.want {
				t.Errorf("Percentile(%v): want %v, got %v", tc.p, tc.want, got)
			}
		})
	}
}
