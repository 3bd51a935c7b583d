package kubectlfirebolt

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
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
	// Core reads Services, Pods and StatefulSets, and scales the original
	// operator's Deployment (migrate).
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

// Core is what the commands read and write of core/v1 and apps/v1. The
// binary's is restCore, REST clients of those two groups alone: client-go's
// typed clients register every group of k8s.io/api (kubernetes/scheme),
// which the cross-compile for each krew platform would compile again.
type Core interface {
	// RESTClient is the core/v1 REST client: pods/proxy (the drain check)
	// and pods/portforward go through it.
	RESTClient() rest.Interface
	ListPods(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.PodList, error)
	GetService(ctx context.Context, namespace, name string) (*corev1.Service, error)
	GetStatefulSet(ctx context.Context, namespace, name string) (*appsv1.StatefulSet, error)
	GetDeployment(ctx context.Context, namespace, name string) (*appsv1.Deployment, error)
	ListDeployments(ctx context.Context, namespace string, opts metav1.ListOptions) (*appsv1.DeploymentList, error)
	PatchDeployment(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte, opts metav1.PatchOptions) (*appsv1.Deployment, error)
}

// restCore is the real Core.
type restCore struct {
	core, apps *rest.RESTClient
	params     runtime.ParameterCodec
}

// newRESTCore makes REST clients of core/v1 and apps/v1 with a scheme of
// those two groups, as client-go's typed clients configure theirs.
func newRESTCore(cfg *rest.Config) (restCore, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return restCore{}, errors.Wrap(err, "cannot register core/v1")
	}
	if err := appsv1.AddToScheme(s); err != nil {
		return restCore{}, errors.Wrap(err, "cannot register apps/v1")
	}
	codecs := serializer.NewCodecFactory(s).WithoutConversion()
	client := func(gv schema.GroupVersion, apiPath string) (*rest.RESTClient, error) {
		c := rest.CopyConfig(cfg)
		c.GroupVersion = &gv
		c.APIPath = apiPath
		c.NegotiatedSerializer = codecs
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		rc, err := rest.RESTClientFor(c)
		return rc, errors.Wrapf(err, "cannot create a %s client", gv)
	}
	core, err := client(corev1.SchemeGroupVersion, "/api")
	if err != nil {
		return restCore{}, err
	}
	apps, err := client(appsv1.SchemeGroupVersion, "/apis")
	if err != nil {
		return restCore{}, err
	}
	return restCore{core: core, apps: apps, params: runtime.NewParameterCodec(s)}, nil
}

func (r restCore) RESTClient() rest.Interface { return r.core }

func (r restCore) ListPods(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.PodList, error) {
	l := &corev1.PodList{}
	return l, r.core.Get().Namespace(namespace).Resource("pods").VersionedParams(&opts, r.params).Do(ctx).Into(l)
}

func (r restCore) GetService(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	o := &corev1.Service{}
	return o, r.core.Get().Namespace(namespace).Resource("services").Name(name).Do(ctx).Into(o)
}

func (r restCore) GetStatefulSet(ctx context.Context, namespace, name string) (*appsv1.StatefulSet, error) {
	o := &appsv1.StatefulSet{}
	return o, r.apps.Get().Namespace(namespace).Resource("statefulsets").Name(name).Do(ctx).Into(o)
}

func (r restCore) GetDeployment(ctx context.Context, namespace, name string) (*appsv1.Deployment, error) {
	o := &appsv1.Deployment{}
	return o, r.apps.Get().Namespace(namespace).Resource("deployments").Name(name).Do(ctx).Into(o)
}

func (r restCore) ListDeployments(ctx context.Context, namespace string, opts metav1.ListOptions) (*appsv1.DeploymentList, error) {
	l := &appsv1.DeploymentList{}
	return l, r.apps.Get().Namespace(namespace).Resource("deployments").VersionedParams(&opts, r.params).Do(ctx).Into(l)
}

func (r restCore) PatchDeployment(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte, opts metav1.PatchOptions) (*appsv1.Deployment, error) {
	o := &appsv1.Deployment{}
	return o, r.apps.Patch(pt).Namespace(namespace).Resource("deployments").Name(name).
		VersionedParams(&opts, r.params).Body(patch).Do(ctx).Into(o)
}

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
	core, err := newRESTCore(cfg)
	if err != nil {
		return Clients{}, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return Clients{}, errors.Wrap(err, "cannot create a metadata client")
	}
	return Clients{
		Dynamic:   dyn,
		Metadata:  md,
		Core:      core,
		Namespace: ns,
		Forwarder: spdyForwarder{config: cfg, core: core},
		Scraper:   scrape.New(core, nil, scrape.Options{Mode: scrape.ModeApiserverProxy}),
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
