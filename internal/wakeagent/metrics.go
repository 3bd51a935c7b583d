package wakeagent

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Results of a stamp attempt, the values of the stamps_total result label.
const (
	stampOK      = "ok"
	stampError   = "error"
	stampLimited = "limited"
)

// Metrics are the agent's Prometheus metrics. The engine-labelled ones are
// written only by Demand, for the engines it tracks, and deleted with the
// entry: their cardinality is that of the bounded demand map.
type Metrics struct {
	pendingHolds  *prometheus.GaugeVec
	shed          *prometheus.CounterVec
	lastDemand    *prometheus.GaugeVec
	demandDropped prometheus.Counter
	stamps        *prometheus.CounterVec
}

// NewMetrics registers the agent's metrics with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		pendingHolds: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "firebolt_gateway_wake_pending_holds",
			Help: "Requests held for the engine until it has a ready endpoint.",
		}, []string{"engine"}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firebolt_gateway_wake_shed_total",
			Help: "Requests for the engine answered 503 because the hold capacity was reached. Reset when the engine's demand entry is pruned.",
		}, []string{"engine"}),
		lastDemand: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "firebolt_gateway_wake_last_demand_timestamp_seconds",
			Help: "Unix time of the last request for the engine while it had no ready endpoint.",
		}, []string{"engine"}),
		demandDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "firebolt_gateway_wake_demand_dropped_total",
			Help: "Demands not tracked because 4096 engines already were; the claim is stamped all the same.",
		}),
		stamps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "firebolt_gateway_wake_stamps_total",
			Help: "Wake stamps on FireboltEngine claims: ok, error (patch failed), limited (skipped, one was made within the stamp interval).",
		}, []string{"result"}),
	}
	for _, c := range []prometheus.Collector{m.pendingHolds, m.shed, m.lastDemand, m.demandDropped, m.stamps} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Every result is exported from the start, so a rate over it is
	// defined before the first stamp.
	for _, r := range []string{stampOK, stampError, stampLimited} {
		m.stamps.WithLabelValues(r)
	}
	return m, nil
}
