package main

import (
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/crossplane/function-sdk-go/errors"
)

// newRESTConfig builds the configuration of the binary's own API calls. An
// explicit kubeconfig must work; without one, the in-cluster service
// account is used when there is one. Outside a cluster with no kubeconfig
// it returns nil.
func newRESTConfig(kubeconfig, userAgent string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	switch {
	case kubeconfig != "":
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot load kubeconfig %q", kubeconfig)
		}
	default:
		cfg, err = rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) {
			return nil, nil
		}
		if err != nil {
			return nil, errors.Wrap(err, "cannot load in-cluster config")
		}
	}
	cfg.UserAgent = userAgent
	return cfg, nil
}

// newKubeConfig is the configuration of the function's own API calls, nil
// outside a cluster with no kubeconfig (crossplane render on a laptop):
// composing needs no API access, only drain checks and the state metrics
// do, and they say so.
func newKubeConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := newRESTConfig(kubeconfig, "function-firebolt")
	if err != nil || cfg == nil {
		return nil, err
	}
	// client-go's default (5 QPS, burst 10) would queue the pod and event
	// lists of many engines draining at once; scrapes have their own limit.
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}

// newCoreClient builds the function's core API client; nil without a
// configuration.
func newCoreClient(cfg *rest.Config) (corev1client.CoreV1Interface, error) {
	if cfg == nil {
		return nil, nil
	}
	// Only the core group is read for composing (pods and their proxy
	// subresource for drain checks, events for stuck rollouts): its typed
	// client, not the clientset of every group, whose code would sit in
	// memory unused.
	c, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, errors.Wrap(err, "cannot create Kubernetes client")
	}
	return c, nil
}
