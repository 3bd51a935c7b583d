package wakeagent

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/dynamic"
	discoveryclient "k8s.io/client-go/kubernetes/typed/discovery/v1"
	"k8s.io/client-go/rest"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/function-sdk-go/errors"
)

const (
	// pruneEvery is how often expired demand is forgotten; an entry lives
	// at most DemandRetention plus this.
	pruneEvery = time.Minute
	// shutdownGrace bounds how long in-flight requests may finish after
	// SIGTERM. Held requests are cut off then: Envoy in the same pod is
	// terminating too, and without the decision header Lua routes through.
	shutdownGrace = 10 * time.Second
	// maxHeaderBytes bounds a request's line and headers; /hold needs a
	// short query and nothing else.
	maxHeaderBytes = 16 << 10
)

// Options configure Run.
type Options struct {
	// Address serves /hold and /healthz, for Envoy's Lua filter.
	Address string
	// MetricsAddress serves /metrics and /healthz.
	MetricsAddress string
	// Namespace is the agent's own: its engines' claims and EndpointSlices.
	Namespace string
	// Config reaches the API server as the gateway's service account.
	Config        *rest.Config
	HoldTimeout   time.Duration
	StampInterval time.Duration
	// Capacity caps the requests held at once.
	Capacity int
	Log      logging.Logger
}

// Run serves the agent until ctx is done, then shuts it down within
// shutdownGrace.
func Run(ctx context.Context, o Options) error {
	if o.Namespace == "" {
		return errors.New("the agent's namespace is unknown")
	}
	if o.HoldTimeout <= 0 || o.StampInterval <= 0 {
		return errors.New("the hold timeout and the stamp interval must be positive")
	}
	disc, err := discoveryclient.NewForConfig(o.Config)
	if err != nil {
		return errors.Wrap(err, "cannot create the EndpointSlice client")
	}
	dyn, err := dynamic.NewForConfig(o.Config)
	if err != nil {
		return errors.Wrap(err, "cannot create the FireboltEngine client")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := NewMetrics(reg)
	if err != nil {
		return errors.Wrap(err, "cannot register metrics")
	}

	readiness := NewReadiness()
	demand := NewDemand(o.Capacity, m)
	agent := &Agent{
		Endpoints:   readiness,
		Demand:      demand,
		Limiter:     NewLimiter(o.StampInterval, MaxTrackedEngines),
		Stamper:     ClaimStamper{Client: dyn, Namespace: o.Namespace},
		Metrics:     m,
		Log:         o.Log,
		HoldTimeout: o.HoldTimeout,
	}

	lc := net.ListenConfig{}
	holdL, err := lc.Listen(ctx, "tcp", o.Address)
	if err != nil {
		return errors.Wrapf(err, "cannot listen on %s", o.Address)
	}
	metricsL, err := lc.Listen(ctx, "tcp", o.MetricsAddress)
	if err != nil {
		_ = holdL.Close()
		return errors.Wrapf(err, "cannot listen on %s", o.MetricsAddress)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", healthz)
	servers := []*http.Server{
		newServer(agent, o.HoldTimeout+stampTimeout+10*time.Second),
		newServer(mux, 30*time.Second),
	}

	o.Log.Info("Serving the wake agent", "address", holdL.Addr().String(), "metricsAddress", metricsL.Addr().String(),
		"namespace", o.Namespace, "holdTimeout", o.HoldTimeout.String(), "stampInterval", o.StampInterval.String(), "capacity", o.Capacity)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(servers))
	var wg sync.WaitGroup
	for i, l := range []net.Listener{holdL, metricsL} {
		wg.Go(func() {
			if err := servers[i].Serve(l); !errors.Is(err, http.ErrServerClosed) {
				errs <- errors.Wrapf(err, "cannot serve on %s", l.Addr())
				cancel()
			}
		})
	}
	wg.Go(func() { WatchEndpointSlices(ctx, disc, o.Namespace, readiness, o.Log) })
	wg.Go(func() { prune(ctx, demand) })

	<-ctx.Done()
	o.Log.Info("Shutting down the wake agent")
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer scancel()
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			_ = s.Close()
		}
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// newServer serves h with every phase of a request bounded; write covers
// the longest answer, a hold.
func newServer(h http.Handler, write time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      write,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// prune forgets expired demand every pruneEvery until ctx is done.
func prune(ctx context.Context, d *Demand) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			d.Prune(now)
		}
	}
}
