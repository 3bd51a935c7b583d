package promcheck

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// TestJudge decides checks from decoded results, including the shapes a
// fake server cannot send through client_golang (a string, a nil result)
// and native histograms.
func TestJudge(t *testing.T) {
	sample := &model.Sample{Metric: model.Metric{"pod": "p0"}, Value: 0}
	histogram := model.SampleHistogramPair{Timestamp: 1, Histogram: &model.SampleHistogram{Count: 1}}
	cases := map[string]struct {
		v        model.Value
		warnings v1.Warnings
		want     Outcome
	}{
		"Vector":                   {v: model.Vector{sample, sample}, want: Outcome{Succeeded: true, Series: 2, Message: "returned 2 series"}},
		"HistogramVector":          {v: model.Vector{{Histogram: histogram.Histogram}}, want: Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"}},
		"EmptyVector":              {v: model.Vector{}, want: Outcome{Message: "returned no data"}},
		"NilVector":                {v: model.Vector(nil), want: Outcome{Message: "returned no data"}},
		"MatrixOfHistograms":       {v: model.Matrix{{Histograms: []model.SampleHistogramPair{histogram}}}, want: Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"}},
		"MatrixWithEmptySeries":    {v: model.Matrix{{Metric: model.Metric{"pod": "p0"}}}, want: Outcome{Message: "returned no data"}},
		"ScalarZero":               {v: &model.Scalar{Value: 0}, want: Outcome{Succeeded: true, Message: "returned scalar 0"}},
		"ScalarNaN":                {v: &model.Scalar{Value: model.SampleValue(math.NaN())}, want: Outcome{Succeeded: true, Message: "returned scalar NaN"}},
		"String":                   {v: &model.String{Value: "x"}, want: Outcome{Succeeded: true, Message: "returned a string"}},
		"Nil":                      {v: nil, want: Outcome{Cause: CauseParse, Message: "query failed: the response holds no result"}},
		"OneWarning":               {v: model.Vector{sample}, warnings: v1.Warnings{"partial"}, want: Outcome{Succeeded: true, Series: 1, Message: "returned 1 series; warning: partial"}},
		"WarningsOnFailureDropped": {v: nil, warnings: v1.Warnings{"partial"}, want: Outcome{Cause: CauseParse, Message: "query failed: the response holds no result"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, judge(tc.v, tc.warnings)); diff != "" {
				t.Errorf("judge: -want, +got:\n%s", diff)
			}
		})
	}
}
