package fn

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
)

// TestRunFunctionMetrics shows that every call is counted by the kind it
// composed, whichever way it ends: composed, refused for an unknown kind,
// refused for bad input, or panicked.
func TestRunFunctionMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := metrics.New(reg, Kinds())
	if err != nil {
		t.Fatal(err)
	}
	f := NewWithComposers(logging.NewNopLogger(), map[string]Composer{
		v1alpha1.XFireboltEngineKind:   panicker{bad: "bad"},
		v1alpha1.XFireboltInstanceKind: &recorder{name: v1alpha1.XFireboltInstanceKind},
	}, WithMetrics(m))
	for _, req := range []struct{ kind, name string }{
		{v1alpha1.XFireboltEngineKind, "good"}, {v1alpha1.XFireboltEngineKind, "bad"}, {v1alpha1.XFireboltInstanceKind, "i"}, {"XUnknown", "x"},
	} {
		if _, err := f.RunFunction(context.Background(), named(req.kind, req.name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.RunFunction(context.Background(), newRequest(v1alpha1.XFireboltEngineKind, `{"apiVersion":"firebolt.fn.crossplane.io/v1beta1","kind":"Input","spec":{"typo":1}}`)); err != nil {
		t.Fatal(err)
	}

	// The kind is known only once the composite is decoded, after the
	// input: a call refused for its input counts as other.
	fatal := map[string]int{v1alpha1.XFireboltEngineKind: 1, metrics.KindOther: 2}
	var want strings.Builder
	want.WriteString("# HELP function_firebolt_results_total Results returned to Crossplane, by the composite's kind and the result's severity.\n# TYPE function_firebolt_results_total counter\n")
	for _, k := range []string{v1alpha1.XFireboltEngineKind, v1alpha1.XFireboltEngineClassKind, v1alpha1.XFireboltInstanceKind, v1alpha1.XPhasedStatefulSetKind, v1alpha1.XPhasedRolloutKind, metrics.KindOther} {
		for _, s := range []string{"fatal", "normal", "unspecified", "warning"} {
			n := 0
			if s == "fatal" {
				n = fatal[k]
			}
			fmt.Fprintf(&want, "function_firebolt_results_total{kind=%q,severity=%q} %d\n", k, s, n)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "function_firebolt_results_total"); err != nil {
		t.Error(err)
	}
	counts := map[string]uint64{}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range fams {
		if fam.GetName() != "function_firebolt_compose_duration_seconds" {
			continue
		}
		for _, s := range fam.GetMetric() {
			counts[s.GetLabel()[0].GetValue()] = s.GetHistogram().GetSampleCount()
		}
	}
	if d := cmp.Diff(map[string]uint64{v1alpha1.XFireboltEngineKind: 2, v1alpha1.XFireboltInstanceKind: 1, metrics.KindOther: 2}, counts); d != "" {
		t.Errorf("compose duration counts by kind (-want +got):\n%s", d)
	}
}
