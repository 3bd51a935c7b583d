package main

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/crossplane/function-sdk-go/errors"
)

// syncTimeout bounds the first list of a watched resource.
const syncTimeout = 2 * time.Minute

// A watched resource is kept in a local store fed by one watch, so the
// waits read the engines every poll without listing them: at N = 500 a
// list every 2 s cost the API server more than the engines do at rest,
// and timed out at 30 s while the control plane was busy.
type watched struct {
	what string
	inf  cache.SharedIndexInformer
}

// watchResource lists ri once (selected by selector) and keeps watching it
// until ctx ends.
func watchResource(ctx context.Context, what string, ri dynamic.ResourceInterface, selector string) (*watched, error) {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return ri.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	go inf.RunWithContext(ctx)
	sctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		return nil, errors.Errorf("cannot list and watch the %s within %s", what, syncTimeout)
	}
	return &watched{what: what, inf: inf}, nil
}

// items returns the objects the watch has delivered so far. They are the
// store's own: read them, never change them.
func (w *watched) items() ([]*unstructured.Unstructured, error) {
	objs := w.inf.GetStore().List()
	us := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return nil, errors.Errorf("the store of the %s holds a %T", w.what, o)
		}
		us = append(us, u)
	}
	return us, nil
}
