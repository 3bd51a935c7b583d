package metrics

import (
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func itoa(n int) string { return strconv.Itoa(n) }

// histogramCount reads the sample count of the series of a histogram whose
// kind label is kind.
func histogramCount(t *testing.T, reg prometheus.Gatherer, name, kind string) uint64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == kind {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}
