package scrape

import "time"

// The engine serves its Prometheus metrics here; both are fixed by the engine
// image, not configurable per engine.
const (
	MetricsPort = 9090
	MetricsPath = "/metrics"
)

// The two gauges whose sum says whether a pod still serves queries.
const (
	RunningQueriesMetric   = "firebolt_running_queries"
	SuspendedQueriesMetric = "firebolt_suspended_queries"
)

// Mode selects how a pod's metrics endpoint is reached.
type Mode string

// Scrape modes, named as the original's FireboltInstance
// spec.metricScrapeMode values.
const (
	// ModeApiserverProxy reaches the pod through the API server's pods/proxy
	// subresource with the function's own credentials, so the function needs
	// no route to pod IPs, only RBAC pods/proxy: get. The empty Mode means
	// this one.
	ModeApiserverProxy Mode = "ApiserverProxy"
	// ModePodIP dials http://<podIP>:9090/metrics directly.
	ModePodIP Mode = "PodIP"
)

// Defaults applied by New to zero or negative Options fields.
const (
	DefaultPodTimeout     = 5 * time.Second
	DefaultOverallTimeout = 15 * time.Second
	// The original scanned lines of up to 1 MiB; an engine's whole exposition
	// is far smaller, so 4 MiB only rejects something that is not an engine.
	DefaultMaxBodyBytes int64 = 4 << 20
	DefaultConcurrency        = 8
	// DefaultMaxConcurrentScrapes bounds the scrapes in flight in the whole
	// process, across every check that shares a Limiter.
	DefaultMaxConcurrentScrapes = 64
)

// Options bound one drain check. Zero or negative fields take the defaults
// above. The overall timeout caps the whole check, listing included, well
// under Crossplane's two-minute reconcile budget. Concurrency bounds one
// check's scrapes in flight and MaxConcurrentScrapes those of every check
// sharing the Client's Limiter, so the process holds at most
// MaxConcurrentScrapes × MaxBodyBytes of bodies.
type Options struct {
	Mode                 Mode
	PodTimeout           time.Duration
	OverallTimeout       time.Duration
	MaxBodyBytes         int64
	Concurrency          int
	MaxConcurrentScrapes int
}

func (o Options) withDefaults() Options {
	if o.Mode == "" {
		o.Mode = ModeApiserverProxy
	}
	if o.PodTimeout <= 0 {
		o.PodTimeout = DefaultPodTimeout
	}
	if o.OverallTimeout <= 0 {
		o.OverallTimeout = DefaultOverallTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxConcurrentScrapes <= 0 {
		o.MaxConcurrentScrapes = DefaultMaxConcurrentScrapes
	}
	return o
}
