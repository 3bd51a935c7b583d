package main

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/internal/wakeagent"
)

// serviceAccountNamespace is where the kubelet mounts the pod's namespace
// with its service account token.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// WakeAgentCmd runs the gateway's wake agent sidecar (internal/wakeagent).
type WakeAgentCmd struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Address        string        `default:"127.0.0.1:9902" help:"Address of the /hold listener Envoy's Lua filter calls."`
	MetricsAddress string        `default:":9903"          help:"Address of the Prometheus metrics listener."`
	Namespace      string        `env:"POD_NAMESPACE"      help:"The gateway's namespace: its engines' claims and EndpointSlices. Defaults to the service account's namespace."`
	HoldTimeout    time.Duration `default:"120s"           help:"How long a request for an engine without a ready endpoint is held."`
	StampInterval  time.Duration `default:"5s"             help:"Least time between two wake stamps on one engine's claim; well under the function's wake TTL."`
	MaxHolds       int           `default:"0"              help:"Requests held at once; 0 derives it from ENVOY_MEMORY_LIMIT_BYTES."`

	Kubeconfig string `env:"KUBECONFIG" help:"Kubeconfig for the agent's API calls. Defaults to the in-cluster service account."`
}

// Run serves the agent until SIGTERM or SIGINT.
func (c *WakeAgentCmd) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return errors.Wrap(err, "cannot create logger")
	}
	if c.HoldTimeout <= 0 {
		return errors.Errorf("--hold-timeout must be positive, got %s", c.HoldTimeout)
	}
	// A stamp is demand for WakeTTL; restamping at half of it at the least
	// keeps a held engine's demand from lapsing between two stamps.
	if c.StampInterval <= 0 || c.StampInterval > autostop.WakeTTL/2 {
		return errors.Errorf("--stamp-interval must be positive and at most %s, got %s", autostop.WakeTTL/2, c.StampInterval)
	}
	ns, err := c.namespace()
	if err != nil {
		return err
	}
	cfg, err := newRESTConfig(c.Kubeconfig, "function-firebolt-wake-agent")
	if err != nil {
		return err
	}
	if cfg == nil {
		return errors.New("no Kubernetes API: not in a cluster and KUBECONFIG unset")
	}
	capacity, reason := wakeagent.Capacity(os.LookupEnv)
	if c.MaxHolds > 0 {
		capacity, reason = c.MaxHolds, "--max-holds set"
	}
	log.Info("Hold capacity", "capacity", capacity, "reason", reason)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return wakeagent.Run(ctx, wakeagent.Options{
		Address:        c.Address,
		MetricsAddress: c.MetricsAddress,
		Namespace:      ns,
		Config:         cfg,
		HoldTimeout:    c.HoldTimeout,
		StampInterval:  c.StampInterval,
		Capacity:       capacity,
		Log:            log,
	})
}

// namespace is --namespace, or else the service account's.
func (c *WakeAgentCmd) namespace() (string, error) {
	if c.Namespace != "" {
		return c.Namespace, nil
	}
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return "", errors.Wrap(err, "cannot tell the agent's namespace: set --namespace or POD_NAMESPACE")
	}
	return strings.TrimSpace(string(b)), nil
}
