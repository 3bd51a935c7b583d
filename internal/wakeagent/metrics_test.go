package wakeagent

import (
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// newTestMetrics returns metrics on a registry of their own.
func newTestMetrics(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// series is every wake series in reg, as name{label="value",...} to value.
func series(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "firebolt_gateway_wake_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			sort.Strings(labels)
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

// withStamps is the engine-free series, with the stamp counters given,
// plus more.
func withStamps(ok, failed, limited float64, more map[string]float64) map[string]float64 {
	out := map[string]float64{
		`firebolt_gateway_wake_stamps_total{result="ok"}`:      ok,
		`firebolt_gateway_wake_stamps_total{result="error"}`:   failed,
		`firebolt_gateway_wake_stamps_total{result="limited"}`: limited,
		`firebolt_gateway_wake_demand_dropped_total{}`:         0,
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

func TestNewMetricsRefusesASecondRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering the metrics twice succeeded")
	}
}
