package wakeagent

import (
	"context"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	discoveryclient "k8s.io/client-go/kubernetes/typed/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// informerResync replays the cache to the handlers now and then, a cheap
// guard against a missed event leaving an engine's readiness wrong.
const informerResync = 10 * time.Minute

// WatchEndpointSlices feeds r from a single informer on the EndpointSlices
// of namespace until ctx is done, and marks r synced once the first list
// is in. It returns when ctx is done and the informer has stopped.
func WatchEndpointSlices(ctx context.Context, client discoveryclient.EndpointSlicesGetter, namespace string, r *Readiness, log logging.Logger) {
	slices := client.EndpointSlices(namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return slices.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return slices.Watch(ctx, o)
		},
	}
	// A client that cannot stream the initial list as a watch (a test's
	// fake) says so; the reflector then lists and watches.
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), &discoveryv1.EndpointSlice{}, informerResync, cache.Indexers{})
	// The cache keeps only what readiness is computed from: a namespace's
	// slices carry addresses, topology and managed fields that would sit in
	// the gateway pod's memory unread.
	if err := inf.SetTransform(trimSlice); err != nil {
		log.Info("Cannot trim cached EndpointSlices; caching them whole", "error", err.Error())
	}
	if _, err := inf.AddEventHandler(readinessHandler(r)); err != nil {
		// Only possible once the informer has stopped, which it has not.
		log.Info("Cannot watch EndpointSlices", "error", err.Error())
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		r.MarkSynced()
		log.Info("EndpointSlices synced; holding requests for engines without a ready endpoint", "namespace", namespace)
	}
	<-done
}

// readinessHandler feeds informer events to r.
func readinessHandler(r *Readiness) cache.ResourceEventHandlerFuncs {
	upsert := func(obj any) {
		s, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok {
			return
		}
		if key, err := cache.MetaNamespaceKeyFunc(s); err == nil {
			r.Upsert(key, s)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    upsert,
		UpdateFunc: func(_, obj any) { upsert(obj) },
		DeleteFunc: func(obj any) {
			// A tombstone's key is the deleted object's.
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				r.Delete(key)
			}
		},
	}
}

// trimSlice keeps of an EndpointSlice its name, namespace, labels and each
// endpoint's conditions.
func trimSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	t := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.Name, Namespace: s.Namespace, UID: s.UID, ResourceVersion: s.ResourceVersion,
			Labels: map[string]string{},
		},
		AddressType: s.AddressType,
		Endpoints:   make([]discoveryv1.Endpoint, len(s.Endpoints)),
	}
	if v, ok := s.Labels[discoveryv1.LabelServiceName]; ok {
		t.Labels[discoveryv1.LabelServiceName] = v
	}
	for i := range s.Endpoints {
		t.Endpoints[i].Conditions = s.Endpoints[i].Conditions
	}
	return t, nil
}
