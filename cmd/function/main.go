// Command function serves the firebolt-crossplane composition function over
// gRPC, as Crossplane's function runtime expects: mTLS on :9443 by default,
// certificates from TLS_SERVER_CERTS_DIR, and --insecure for local rendering.
package main

import (
	"github.com/alecthomas/kong"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
)

// CLI is the binary's command line: the function, and the gateway's wake
// agent, which ships in the same image so that one image version serves
// both. Serving the function is the default command, so the image runs as
// Crossplane's package runtime starts it, with flags and no command.
type CLI struct {
	Serve     ServeCmd     `cmd:"" default:"withargs" help:"Serve the composition function over gRPC (the default)."`
	WakeAgent WakeAgentCmd `cmd:"" name:"wake-agent"  help:"Run the gateway's wake agent: hold requests for stopped engines and stamp their claims to wake them."`
}

// ServeCmd serves the function. The flag names are those Crossplane's
// function specification requires (--debug, --insecure, --tls-certs-dir)
// plus the ones every SDK-based function offers.
type ServeCmd struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network            string `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address            string `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSCertsDir        string `env:"TLS_SERVER_CERTS_DIR" help:"Directory holding the server's tls.crt, tls.key and the ca.crt of the clients it trusts."`
	Insecure           bool   `help:"Serve without mTLS. Only for local development with crossplane render."`
	MaxRecvMessageSize int    `default:"4"     help:"Maximum size of a received gRPC message, in MiB."`
	MetricsAddress     string `default:":8080" help:"Address of the Prometheus metrics listener; empty disables it."`

	Kubeconfig string `env:"KUBECONFIG" help:"Kubeconfig for the function's own API calls (pods/proxy drain scrapes). Defaults to the in-cluster service account."`

	StateMetrics               bool   `default:"true" negatable:"" help:"Export the original operator's firebolt_instance_* and firebolt_engine_* metrics, derived from the composites' status, from the one replica that holds the state metrics Lease. Needs a Kubernetes client and --metrics-address."`
	StateMetricsLease          string `default:"function-firebolt-state-metrics" help:"Name of the Lease that elects the replica exporting the state metrics."`
	StateMetricsLeaseNamespace string `env:"POD_NAMESPACE" help:"Namespace of the state metrics Lease: the function's own. Defaults to the service account's namespace."`
	StateMetricsMaxObjects     int    `default:"10000" help:"Most engines, and most instances, that have state metrics; the rest are counted in function_firebolt_state_metrics_untracked_objects."`
}

// Run serves the function until the process is stopped.
func (c *ServeCmd) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return errors.Wrap(err, "cannot create logger")
	}
	if c.TLSCertsDir == "" && !c.Insecure {
		return errors.New("--tls-certs-dir (or TLS_SERVER_CERTS_DIR) is required unless --insecure is set")
	}
	if c.MaxRecvMessageSize <= 0 {
		return errors.Errorf("--max-recv-message-size must be positive, got %d", c.MaxRecvMessageSize)
	}

	cfg, err := newKubeConfig(c.Kubeconfig)
	if err != nil {
		return err
	}
	kube, err := newCoreClient(cfg)
	if err != nil {
		return err
	}
	if kube == nil {
		log.Info("No Kubernetes client configured (not in a cluster and KUBECONFIG unset); drain checks will report DrainCheckFailing")
	}

	var sm *stateMetrics
	switch {
	case !c.StateMetrics:
	case cfg == nil:
		log.Info("No Kubernetes client configured; the original operator's state metrics are not exported")
	case c.MetricsAddress == "":
	default:
		if sm, err = c.newStateMetrics(cfg, log); err != nil {
			return err
		}
	}

	reg, rec, err := newMetrics(c.MetricsAddress, sm)
	if err != nil {
		return err
	}
	if sm != nil {
		sm.start(log)
	}

	return function.Serve(fn.New(log, kube, fn.WithMetrics(rec)),
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024),
		function.WithMetricsServer(c.MetricsAddress),
		function.WithMetricsRegistry(reg))
}

// newMetrics returns the registry the SDK serves on address, holding the
// process and Go runtime collectors (as the SDK's default registry would),
// the function's own metrics and, when sm is set, the state metrics, and
// the recorder that feeds them. With no address nothing is served, so
// nothing is recorded.
func newMetrics(address string, sm *stateMetrics) (*prometheus.Registry, metrics.Recorder, error) {
	reg := prometheus.NewRegistry()
	if address == "" {
		return reg, metrics.Nop{}, nil
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var o []metrics.Option
	if sm != nil {
		if err := reg.Register(sm.collector); err != nil {
			return nil, nil, errors.Wrap(err, "cannot register the state metrics")
		}
		o = append(o, metrics.WithEngineDrainCounter(sm.collector))
	}
	m, err := metrics.New(reg, fn.Kinds(), o...)
	if err != nil {
		return nil, nil, errors.Wrap(err, "cannot register metrics")
	}
	return reg, m, nil
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("The firebolt-crossplane composition function."))
	ctx.FatalIfErrorf(ctx.Run())
}
