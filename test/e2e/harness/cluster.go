// Package harness runs a whole local control plane (etcd, Kubernetes, KWOK,
// Crossplane, the packages) in a network namespace, for the end-to-end tests
// and `make up`.
package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/crossplane/function-sdk-go/errors"
)

// A Cluster is a running local control plane with Crossplane and the
// product installed. Every process runs in the caller's network namespace,
// which must be the private one (see NetnsCommand).
type Cluster struct {
	Tools *Tools
	// Dir holds the logs, certificates, etcd data and kubeconfigs.
	Dir string
	// Kubeconfig is the admin kubeconfig (system:masters).
	Kubeconfig string

	Admin *rest.Config
	Kube  kubernetes.Interface
	Dyn   dynamic.Interface

	// Pods serves the metrics of every pod IP, as engine pods would.
	Pods *FakePods

	log    io.Writer
	logMu  sync.Mutex
	mu     sync.Mutex
	fnName string
	procs  *procs
	pki    *pki
	mapper *restmapper.DeferredDiscoveryRESTMapper
	bgCtx  context.Context
	cancel context.CancelFunc
	bg     sync.WaitGroup

	xp *crossplaneState
	// prov is provider-kubernetes's runtime, guarded by mu.
	prov providerState
	// forwards are the stack's ends of the provider's bridge, guarded by
	// mu; Stop closes them once every process has stopped.
	forwards []*forwarder

	wrap func(http.RoundTripper) http.RoundTripper
	// auditLog, when set, is where kube-apiserver logs every write.
	auditLog string
	// crossplaneFlags are added to Crossplane's command line.
	crossplaneFlags []string

	// beforePackages runs beside the stack's start once the control plane
	// and its pods run, and must end before the Configuration is
	// installed; nil when no option set it.
	beforePackages func(context.Context, *Cluster) error
}

// An Option changes how Start sets the stack up.
type Option func(*Cluster)

// WithTransport wraps the transport of every client the harness itself
// uses (its waits, the fake pods, the volume provisioner): the scale
// harness counts the harness's own requests this way to leave them out of
// what the API server reports.
func WithTransport(wrap func(http.RoundTripper) http.RoundTripper) Option {
	return func(c *Cluster) { c.wrap = wrap }
}

// WithAuditLog has kube-apiserver log every write request (not reads or
// watches) at the Metadata level, as JSON lines, to path: who wrote what,
// when, for `make scale -audit`. Logging costs the API server CPU, so runs
// that measure time leave it off.
func WithAuditLog(path string) Option {
	return func(c *Cluster) { c.auditLog = path }
}

// WithCrossplaneFlags adds flags to Crossplane's command line (`make
// scale` measures what a platform operator's settings change); without it
// Crossplane runs on its defaults.
func WithCrossplaneFlags(flags ...string) Option {
	return func(c *Cluster) { c.crossplaneFlags = append(c.crossplaneFlags, flags...) }
}

// BeforePackages runs hook while cert-manager, Crossplane and the function
// start, and waits for it before the packages are installed: the
// migration scenario makes the original operator's CRDs and objects and
// moves them over there, while nothing of this product's API is served.
func BeforePackages(hook func(context.Context, *Cluster) error) Option {
	return func(c *Cluster) { c.beforePackages = hook }
}

// Start brings up the whole stack in dir: the control plane, cert-manager
// with a CA ClusterIssuer (CAIssuer), Crossplane with the External package
// runtime, the function, the loopback registry with the packages pushed,
// the installed Configuration, and provider-kubernetes, its other
// dependency. It returns once CAIssuer is Ready, the Configuration, its
// Function and the Provider are healthy and the Provider's ProviderConfig
// exists. Progress goes to log.
func Start(ctx context.Context, tools *Tools, dir string, log io.Writer, opts ...Option) (*Cluster, error) {
	for _, d := range []string{"logs", "etcd", "xpkg-cache"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, errors.Wrapf(err, "cannot create %s", d)
		}
	}
	// The background work outlives Start's ctx: Stop ends it.
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &Cluster{
		Tools:      tools,
		Dir:        dir,
		Kubeconfig: filepath.Join(dir, "kubeconfig"),
		log:        log,
		procs:      newProcs(filepath.Join(dir, "logs")),
		bgCtx:      bg,
		cancel:     cancel,
	}
	for _, o := range opts {
		o(c)
	}
	var before <-chan error
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"control plane", c.startControlPlane},
		{"background helpers", func(context.Context) error { c.startBackground(bg); return nil }},
		{"cert-manager", func(ctx context.Context) error {
			before = c.startBeforePackages(ctx)
			return c.startCertManager(ctx)
		}},
		{"Crossplane", c.startCrossplane},
		{"deploy/ manifests and the function", c.startFunction},
		{"work before the packages", func(ctx context.Context) error { return waitBefore(ctx, before) }},
		{"registry and packages", c.installPackages},
		{"provider-kubernetes", c.startProviderKubernetes},
	}
	start := time.Now()
	for _, s := range steps {
		t := time.Now()
		if err := s.run(ctx); err != nil {
			tails := c.tails(25)
			c.Stop()
			return nil, errors.Wrapf(err, "cannot start the %s (logs in %s)\n%s", s.name, c.path("logs"), tails)
		}
		c.logf("%s up in %s", s.name, time.Since(t).Round(time.Millisecond))
	}
	c.logf("stack up in %s", time.Since(start).Round(time.Millisecond))
	return c, nil
}

// startBeforePackages starts the BeforePackages hook, if any.
func (c *Cluster) startBeforePackages(ctx context.Context) <-chan error {
	if c.beforePackages == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- c.beforePackages(ctx, c) }()
	return done
}

// waitBefore waits for the BeforePackages hook started, if any.
func waitBefore(ctx context.Context, done <-chan error) error {
	if done == nil {
		return nil
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errors.Wrap(ctx.Err(), "the work before the packages did not end")
	}
}

// Stop ends every process in reverse start order, then the forwards to
// the provider's namespace (so the provider stops with its connections
// intact) and the background loops.
func (c *Cluster) Stop() {
	c.cancel()
	c.procs.stopAll()
	c.mu.Lock()
	fws := c.forwards
	c.forwards = nil
	c.mu.Unlock()
	for _, fw := range fws {
		fw.Close()
	}
	c.bg.Wait()
}

// tails is the end of every process's log.
func (c *Cluster) tails(lines int) string {
	var b strings.Builder
	for _, p := range c.procs.all() {
		fmt.Fprintf(&b, "----- end of %s\n%s\n", p.Log, p.LogTail(0, lines))
	}
	return b.String()
}

// Process returns one of the stack's processes by name: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kwok, cert-manager
// (CertManagerProcess), crossplane, crossplane-rbac-manager, function,
// provider-kubernetes (ProviderProcess: its bridge, whose child is the
// provider).
func (c *Cluster) Process(name string) *Process { return c.procs.get(name) }

// Processes returns every process, in start order.
func (c *Cluster) Processes() []*Process { return c.procs.all() }

// startBackground starts the helpers that play a kubelet and a volume
// provisioner. They read pods, nodes and volumes from informer caches, as
// the components they stand in for watch them: polling with LISTs would
// load the API server in proportion to the number of pods, which the scale
// harness measures.
func (c *Cluster) startBackground(ctx context.Context) {
	f := informers.NewSharedInformerFactory(c.Kube, 0)
	c.Pods = newFakePods(c, f.Core().V1().Pods().Lister(), f.Core().V1().Nodes().Lister())
	vols := volumeListers{pvcs: f.Core().V1().PersistentVolumeClaims().Lister(), pvs: f.Core().V1().PersistentVolumes().Lister()}
	f.Start(ctx.Done())
	synced := func() bool {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				c.logf("background helpers: the %s cache never synced", typ)
				return false
			}
		}
		return true
	}
	for _, run := range []func(context.Context){func(ctx context.Context) { c.provisionVolumes(ctx, vols) }, c.Pods.run} {
		c.bg.Add(1)
		go func() {
			defer c.bg.Done()
			if synced() {
				run(ctx)
			}
		}()
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		<-ctx.Done()
		f.Shutdown()
	}()
}

func (c *Cluster) initClients() error {
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		return errors.Wrap(err, "cannot create a dynamic client")
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Admin)
	if err != nil {
		return errors.Wrap(err, "cannot create a discovery client")
	}
	c.Dyn = dyn
	c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return nil
}

// Resource maps a kind to the client for its resource, namespaced when ns is
// not empty. Kinds served by CRDs created after the last lookup are found by
// refreshing discovery once.
func (c *Cluster) Resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, error) {
	m, err := c.mapping(gvk)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return c.Dyn.Resource(m.Resource), nil
}

// mapping is the kind's resource and scope, refreshing discovery once for a
// kind served by a CRD created after the last lookup.
func (c *Cluster) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, errors.Wrapf(err, "cannot map %s", gvk)
}

// namespaced says whether the kind's objects live in a namespace.
func (c *Cluster) namespaced(gvk schema.GroupVersionKind) (bool, error) {
	m, err := c.mapping(gvk)
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// ResourceFor is Resource for an object's own kind and namespace.
func (c *Cluster) ResourceFor(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	return c.Resource(u.GroupVersionKind(), u.GetNamespace())
}

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.Dir}, elem...)...)
}

func (c *Cluster) logf(format string, args ...any) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	_, _ = fmt.Fprintf(c.log, "%s harness: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
