package kubectlfirebolt

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
	"github.com/firebolt-db/firebolt-crossplane/internal/wakestamp"
)

// The claims the plugin works on.
var (
	engineResource   = wakestamp.EngineResource
	instanceResource = v1alpha1.SchemeGroupVersion.WithResource("fireboltinstances")
	classResource    = v1alpha1.SchemeGroupVersion.WithResource("fireboltengineclasses")
	serviceResource  = corev1.SchemeGroupVersion.WithResource("services")
)

// Flags choose the cluster and the namespace, as kubectl's flags of the
// same names do.
type Flags struct {
	Namespace  string
	Context    string
	Kubeconfig string
}

// Clients is what the commands reach the cluster with.
type Clients struct {
	// Dynamic reads and writes the claims.
	Dynamic dynamic.Interface
	// Core reads Services, Pods and StatefulSets.
	Core Core
	// Metadata reads and patches the metadata of what the original
	// operator made (migrate); a Secret's data never reaches it.
	Metadata metadata.Interface
	// Namespace is the namespace the commands work in: -n, else the
	// context's namespace, else default.
	Namespace string
	// Forwarder forwards a local port to a pod's.
	Forwarder Forwarder
	// Scraper reads the queries engine pods still serve, for the live
	// drain check of engine status.
	Scraper Scraper
	// Now is the clock of the wake stamp: the API server's, as its last
	// response told it; nil is time.Now.
	Now func() time.Time
}

func (c Clients) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// Core is the typed API groups the commands use. kubernetes.Interface (and
// its fake) satisfies it; the binary builds only these two groups, not
// every group of k8s.io/api, which a cross-compile for each krew platform
// would otherwise compile again.
type Core interface {
	CoreV1() corev1client.CoreV1Interface
	AppsV1() appsv1client.AppsV1Interface
}

// typedClients is the real Core.
type typedClients struct {
	core corev1client.CoreV1Interface
	apps appsv1client.AppsV1Interface
}

func (t typedClients) CoreV1() corev1client.CoreV1Interface { return t.core }
func (t typedClients) AppsV1() appsv1client.AppsV1Interface { return t.apps }

// Scraper reads firebolt_running_queries and firebolt_suspended_queries
// from the pods selector names, as the function's drain check does.
type Scraper interface {
	Observe(ctx context.Context, namespace string, selector labels.Selector) scrape.Observation
}

// LoadConfig resolves the kubeconfig as kubectl does: --kubeconfig, else
// KUBECONFIG (a list of files, merged), else ~/.kube/config; --context,
// else the current context; -n, else the context's namespace.
func LoadConfig(f Flags) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", errors.Wrap(err, "cannot load kubeconfig")
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", errors.Wrap(err, "cannot read the kubeconfig context's namespace")
	}
	cfg.UserAgent = "kubectl-firebolt/" + Version
	return cfg, ns, nil
}

// NewClients makes the real clients from the kubeconfig the flags name.
func NewClients(f Flags) (Clients, error) {
	cfg, ns, err := LoadConfig(f)
	if err != nil {
		return Clients{}, err
	}
	clock := &serverClock{}
	cfg.Wrap(clock.wrap)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Clients{}, errors.Wrap(err, "cannot create a dynamic client")
	}
	cv1, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return Clients{}, errors.Wrap(err, "cannot create a core/v1 client")
	}
	av1, err := appsv1client.NewForConfig(cfg)
	if err != nil {
		return Clients{}, errors.Wrap(err, "cannot create an apps/v1 client")
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return Clients{}, errors.Wrap(err, "cannot create a metadata client")
	}
	core := typedClients{core: cv1, apps: av1}
	return Clients{
		Dynamic:   dyn,
		Metadata:  md,
		Core:      core,
		Namespace: ns,
		Forwarder: spdyForwarder{config: cfg, core: core},
		Scraper:   scrape.New(core.CoreV1(), nil, scrape.Options{Mode: scrape.ModeApiserverProxy}),
		Now:       clock.Now,
	}, nil
}

// gvrName is the singular lower-case kind, as kubectl names objects
// (fireboltengine/demo).
func gvrName(r schema.GroupVersionResource) string {
	switch r {
	case engineResource:
		return "fireboltengine"
	case instanceResource:
		return "fireboltinstance"
	case classResource:
		return "fireboltengineclass"
	case serviceResource:
		return "service"
	}
	return r.Resource
}
