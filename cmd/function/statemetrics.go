package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/fn/statemetrics"
)

// releaseGrace bounds how long a stopping process waits for its Lease to be
// released, so that the standby takes over at once, before it exits.
const releaseGrace = 5 * time.Second

// stateMetrics is the running state metrics: the collector to register and
// the election that decides whether this process exports it.
type stateMetrics struct {
	collector *statemetrics.Collector
	lease     statemetrics.Lease
}

// newStateMetrics builds the collector and the Lease's election from cfg.
func (c *ServeCmd) newStateMetrics(cfg *rest.Config, log logging.Logger) (*stateMetrics, error) {
	ns, err := c.leaseNamespace()
	if err != nil {
		return nil, err
	}
	if c.StateMetricsLease == "" {
		return nil, errors.New("--state-metrics-lease must name the Lease; turn state metrics off with --no-state-metrics")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "function-firebolt-state-metrics"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, errors.Wrap(err, "cannot create the state metrics' Kubernetes client")
	}
	apps, err := appsv1client.NewForConfig(cfg)
	if err != nil {
		return nil, errors.Wrap(err, "cannot create the state metrics' Kubernetes client")
	}
	coord, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, errors.Wrap(err, "cannot create the state metrics' Kubernetes client")
	}
	col, err := statemetrics.New(dyn, apps, statemetrics.WithMaxObjects(c.StateMetricsMaxObjects), statemetrics.WithLogger(log))
	if err != nil {
		return nil, errors.Wrap(err, "invalid --state-metrics-max-objects")
	}
	id, err := identity()
	if err != nil {
		return nil, err
	}
	return &stateMetrics{collector: col, lease: statemetrics.Lease{
		Client: coord, Namespace: ns, Name: c.StateMetricsLease, Identity: id, Log: log,
	}}, nil
}

// leaseNamespace is --state-metrics-lease-namespace (POD_NAMESPACE), or else
// the service account's namespace.
func (c *ServeCmd) leaseNamespace() (string, error) {
	if c.StateMetricsLeaseNamespace != "" {
		return c.StateMetricsLeaseNamespace, nil
	}
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return "", errors.New("cannot tell the namespace of the state metrics Lease: set --state-metrics-lease-namespace or POD_NAMESPACE, or turn state metrics off with --no-state-metrics")
	}
	return strings.TrimSpace(string(b)), nil
}

// identity names this process in the Lease: the host (the pod's name) and
// a random suffix, so that two processes on one host never share it.
func identity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", errors.Wrap(err, "cannot read the host name for the state metrics Lease")
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", errors.Wrap(err, "cannot make the state metrics Lease identity")
	}
	return host + "_" + hex.EncodeToString(b), nil
}

// start runs the informers and the election in the background. On SIGTERM
// or SIGINT the Lease is released (within releaseGrace) and the signal is
// raised again, so the process ends as it did before it caught it.
func (s *stateMetrics) start(log logging.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	go s.collector.Run(ctx)
	released := make(chan struct{})
	go func() {
		defer close(released)
		if err := s.lease.Run(ctx, s.collector.SetLeading); err != nil {
			log.Info("State metrics are not exported", "error", err.Error())
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-sigs
		cancel()
		select {
		case <-released:
		case <-time.After(releaseGrace):
		}
		signal.Stop(sigs)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Signal(sig)
		}
	}()
}
