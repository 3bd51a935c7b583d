// Command cert-manager runs cert-manager v1.21.1's own controllers for
// Certificates, for Issuers and ClusterIssuers, and for the
// CertificateRequests of SelfSigned and CA issuers, against a kubeconfig:
// what the end-to-end stack and `make up` need, without leader election, the
// webhook or the cainjector.
//
// cert-manager's controller command (cmd/controller, module
// github.com/cert-manager/cert-manager/controller-binary) is a module of its
// own whose path does not match its directory, so the Go module proxy does
// not serve it. Its controllers, and the context they are built from, are
// exported by the root module (pkg/controller): each controller package
// registers its constructor with controller.Register when imported, and
// this command does what the controller command does with them: build a
// controller.ContextFactory from the options, construct the enabled
// controllers (which registers their informers), start the shared informer
// factories, run every controller, and serve Prometheus metrics.
//
// Only the SelfSigned and CA issuer types are compiled in (pkg/issuer/...):
// an Issuer of another type is reported as unknown by the issuers
// controllers. Without the webhook nothing validates or defaults
// cert-manager objects on admission (a Certificate with renewBefore ≥
// duration, say, is accepted and fails later), CertificateRequests carry no
// requester identity (spec.username, groups, uid, extra), and approving or
// denying one is not checked against the `approve` verb on signers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	crapprover "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	certmetrics "github.com/cert-manager/cert-manager/pkg/controller/certificates/metrics"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"k8s.io/klog/v2"

	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"         // The CA issuer type, for the (Cluster)Issuer controllers.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned" // The SelfSigned issuer type.
)

// defaultControllers are the controllers this command runs unless
// --controllers says otherwise: those of cert-manager's default set that
// serve Certificates from SelfSigned and CA issuers. The Certificate's
// secretTemplate and additional output formats are the issuing
// controller's; the approver approves every CertificateRequest for a
// cert-manager.io issuer, as cert-manager does without a policy engine.
var defaultControllers = []string{
	issuers.ControllerName,
	clusterissuers.ControllerName,
	certmetrics.ControllerName,
	crapprover.ControllerName,
	crca.CRControllerName,
	crselfsigned.CRControllerName,
	trigger.ControllerName,
	issuing.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
}

// Defaults of cert-manager's controller configuration
// (internal/apis/config/controller/v1alpha1/defaults.go), but for the
// listeners, which default to loopback here rather than every interface.
var copiedAnnotationPrefixes = []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"}

const (
	defaultQPS        = 20
	defaultBurst      = 50
	defaultWorkers    = 5
	minRequestBackoff = time.Hour
	maxRequestBackoff = 32 * time.Hour
	shutdownTimeout   = 10 * time.Second
	readHeaderTimeout = 10 * time.Second
)

type options struct {
	kubeconfig               string
	namespace                string
	clusterResourceNamespace string
	controllers              string
	metricsAddress           string
	healthAddress            string
	workers                  int
	qps                      float64
	burst                    int
	minBackoff, maxBackoff   time.Duration
	ownerRef                 bool
}

func main() {
	o := options{}
	fs := flag.NewFlagSet("cert-manager", flag.ExitOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster to manage (default $KUBECONFIG)")
	fs.StringVar(&o.namespace, "namespace", "", "namespace to manage; empty for all (the clusterissuers controller needs all)")
	fs.StringVar(&o.clusterResourceNamespace, "cluster-resource-namespace", "cert-manager",
		"namespace of the Secrets ClusterIssuers refer to (a CA ClusterIssuer's key pair)")
	fs.StringVar(&o.controllers, "controllers", strings.Join(defaultControllers, ","), "comma-separated controllers to run")
	fs.StringVar(&o.metricsAddress, "metrics-listen-address", "127.0.0.1:9402", "address of the Prometheus /metrics listener; empty for none")
	fs.StringVar(&o.healthAddress, "health-listen-address", "127.0.0.1:9403",
		"address of the /livez and /readyz listener (ready once every informer cache synced); empty for none")
	fs.IntVar(&o.workers, "workers", defaultWorkers, "workers per controller")
	fs.Float64Var(&o.qps, "kube-api-qps", defaultQPS, "API client QPS when the API server has no priority and fairness")
	fs.IntVar(&o.burst, "kube-api-burst", defaultBurst, "API client burst when the API server has no priority and fairness")
	fs.DurationVar(&o.minBackoff, "certificate-request-minimum-backoff-duration", minRequestBackoff,
		"first wait before a failed issuance is retried")
	fs.DurationVar(&o.maxBackoff, "certificate-request-maximum-backoff-duration", maxRequestBackoff,
		"longest wait before a failed issuance is retried")
	fs.BoolVar(&o.ownerRef, "enable-certificate-owner-ref", false,
		"make each Certificate the owner of its Secret, so deleting the Certificate deletes the Secret (cert-manager's flag and default)")
	klog.InitFlags(fs) // -v and friends
	_ = fs.Parse(os.Args[1:])
	os.Exit(serve(o))
}

// serve runs the controllers until SIGINT or SIGTERM and returns the exit
// status.
func serve(o options) int {
	logf.InitLogs()
	defer logf.FlushLogs()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		logf.Log.Error(err, "cert-manager controller failed")
		return 1
	}
	return 0
}

// run serves until ctx ends or a controller fails.
func run(ctx context.Context, o options) error {
	names, err := enabled(o.controllers)
	if err != nil {
		return err
	}
	ctx = logf.NewContext(ctx, logf.Log, "controller")
	log := logf.FromContext(ctx)

	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         o.kubeconfig,
		KubernetesAPIQPS:   float32(o.qps),
		KubernetesAPIBurst: o.burst,
		Namespace:          o.namespace,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: o.clusterResourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef:                           o.ownerRef,
			CopiedAnnotationPrefixes:                 copiedAnnotationPrefixes,
			CertificateRequestMinimumBackoffDuration: o.minBackoff,
			CertificateRequestMaximumBackoffDuration: o.maxBackoff,
		},
	})
	if err != nil {
		return fmt.Errorf("cannot build the controller context: %w", err)
	}

	// Constructing a controller registers the informers it needs with the
	// shared factories, so every one is built before they start.
	ctrls := make(map[string]controller.Interface, len(names))
	for _, n := range names {
		c, err := controller.Known()[n](factory)
		if err != nil {
			return fmt.Errorf("cannot construct controller %s: %w", n, err)
		}
		ctrls[n] = c
	}
	// A context of its own only to reach the shared informer factories and
	// metrics, which every built context shares.
	shared, err := factory.Build("informers")
	if err != nil {
		return fmt.Errorf("cannot build the shared context: %w", err)
	}

	var ready atomic.Bool
	servers, err := listen(ctx, o, shared, &ready)
	if err != nil {
		return err
	}

	// A controller that fails stops the others, the informers and the
	// process.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	var wg sync.WaitGroup
	for n, c := range ctrls {
		wg.Go(func() {
			log.V(logf.InfoLevel).Info("starting controller", "controller", n)
			if err := c.Run(o.workers, ctx); err != nil {
				cancel(fmt.Errorf("controller %s: %w", n, err))
			}
		})
	}
	synced := waitSynced(ctx, shared)
	if synced {
		ready.Store(true)
		log.V(logf.InfoLevel).Info("informer caches synced; controllers running", "controllers", names)
	}

	<-ctx.Done()
	log.V(logf.InfoLevel).Info("stopping")
	wg.Wait()
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer scancel()
	for _, s := range servers {
		_ = s.Shutdown(sctx)
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// enabled checks the names against the registered controllers.
func enabled(list string) ([]string, error) {
	var names []string
	for n := range strings.SplitSeq(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" || slices.Contains(names, n) {
			continue
		}
		if _, ok := controller.Known()[n]; !ok {
			known := make([]string, 0, len(controller.Known()))
			for k := range controller.Known() {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("unknown controller %q; this build has %s", n, strings.Join(known, ", "))
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, errors.New("no controllers enabled")
	}
	return names, nil
}

// waitSynced waits until every informer the controllers registered has
// synced; false when ctx ended first.
func waitSynced(ctx context.Context, shared *controller.Context) bool {
	for _, m := range []map[string]bool{
		shared.KubeSharedInformerFactory.WaitForCacheSync(ctx.Done()),
		typedSynced(shared.SharedInformerFactory.WaitForCacheSync(ctx.Done())),
	} {
		for _, ok := range m {
			if !ok {
				return false
			}
		}
	}
	return ctx.Err() == nil
}

func typedSynced[K comparable](m map[K]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[fmt.Sprint(k)] = v
	}
	return out
}

// listen starts the metrics and health listeners. Metrics are served from
// cert-manager's own registry, once every controller (the certificates
// metrics controller registers a collector) is constructed.
func listen(ctx context.Context, o options, shared *controller.Context, ready *atomic.Bool) ([]*http.Server, error) {
	var servers []*http.Server
	start := func(addr string, srv func(net.Listener) *http.Server) error {
		if addr == "" {
			return nil
		}
		l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("cannot listen on %s: %w", addr, err)
		}
		s := srv(l)
		servers = append(servers, s)
		go func() { _ = s.Serve(l) }()
		return nil
	}
	if err := start(o.metricsAddress, shared.Metrics.NewServer); err != nil {
		return nil, err
	}
	err := start(o.healthAddress, func(net.Listener) *http.Server {
		mux := http.NewServeMux()
		mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			if !ready.Load() {
				http.Error(w, "informer caches not synced yet", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok"))
		})
		return &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}
	})
	if err != nil {
		for _, s := range servers {
			_ = s.Close()
		}
		return nil, err
	}
	return servers, nil
}
