// Package statemetrics exports the original Firebolt operator's Prometheus
// metrics (firebolt_instance_*, firebolt_engine_*) so that its dashboards
// and alerts work unchanged. They are state metrics: each is derived, at
// scrape time, from a composite's status (and its current generation's
// StatefulSet), which informers the function process runs keep in a cache
// trimmed to what the series need, as kube-state-metrics does. An object
// gone from the cache has no series, so a deleted engine's series go with
// it.
//
// Crossplane calls any replica of the function, so per-call values would
// differ between replicas. Instead every replica keeps the cache warm, and
// only the holder of a Lease (Lease.Run) exports the state series: each
// series comes from one process. The one exception is the original's
// counter of failed drain checks, which only the process that ran the
// check can count: every replica exports its own, and readers sum them.
package statemetrics

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
)

// DefaultMaxObjects bounds the engines, and separately the instances, that
// have series: far above what one cluster runs, low enough that a flood of
// composites cannot make a scrape unbounded.
const DefaultMaxObjects = 10000

// The composites whose status the series read.
var (
	EnginesResource   = schema.GroupVersionResource{Group: v1alpha1.Group, Version: v1alpha1.Version, Resource: "xfireboltengines"}
	InstancesResource = schema.GroupVersionResource{Group: v1alpha1.Group, Version: v1alpha1.Version, Resource: "xfireboltinstances"}
)

// StatefulSetSelector selects the engines' StatefulSets: every generation's
// carries both labels.
var StatefulSetSelector = contract.LabelEngine + "," + engine.LabelGeneration

// Reasons a composite has no series.
const (
	reasonOverLimit = "over_limit"
	reasonNoClaim   = "no_claim"
	reasonDuplicate = "duplicate_claim"
)

const indexGeneration = "generation"

// Collector is a prometheus.Collector of the state series.
type Collector struct {
	d            descs
	engines      cache.SharedIndexInformer
	instances    cache.SharedIndexInformer
	statefulSets cache.SharedIndexInformer
	drains       *drainCounts
	leading      atomic.Bool
	max          int
	now          func() time.Time
	log          logging.Logger
}

// An Option configures a Collector.
type Option func(*Collector)

// WithMaxObjects replaces DefaultMaxObjects.
func WithMaxObjects(n int) Option { return func(c *Collector) { c.max = n } }

// WithClock replaces the wall clock (pending rotation seconds, the drain
// counters' grace), for tests.
func WithClock(now func() time.Time) Option { return func(c *Collector) { c.now = now } }

// WithLogger logs the informers' list and watch errors to log.
func WithLogger(log logging.Logger) Option { return func(c *Collector) { c.log = log } }

// New returns a Collector reading composites through dyn and StatefulSets
// through sts. Run starts its informers.
func New(dyn dynamic.Interface, sts appsv1client.StatefulSetsGetter, o ...Option) (*Collector, error) {
	c := &Collector{d: newDescs(), max: DefaultMaxObjects, now: time.Now, log: logging.NewNopLogger()}
	for _, fn := range o {
		fn(c)
	}
	if c.max < 1 {
		return nil, errors.Errorf("the maximum of tracked objects must be at least 1, got %d", c.max)
	}
	c.drains = newDrainCounts(c.max, c.now)
	c.engines = compositeInformer(dyn, EnginesResource)
	c.instances = compositeInformer(dyn, InstancesResource)
	// A client may say it cannot stream the initial list as a watch (the
	// fakes do); the reflector then lists, as it did before client-go
	// streamed.
	c.statefulSets = cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = StatefulSetSelector
			return sts.StatefulSets(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = StatefulSetSelector
			return sts.StatefulSets(metav1.NamespaceAll).Watch(ctx, o)
		},
	}, sts), &appsv1.StatefulSet{}, 0, cache.Indexers{indexGeneration: func(obj any) ([]string, error) {
		s, ok := obj.(*statefulSetState)
		if !ok {
			return nil, nil
		}
		return []string{s.Namespace + "/" + s.engine + "/" + s.generation}, nil
	}})
	for inf, trim := range map[cache.SharedIndexInformer]cache.TransformFunc{c.engines: trimEngine, c.instances: trimInstance, c.statefulSets: trimStatefulSet} {
		if err := inf.SetTransform(trim); err != nil {
			return nil, errors.Wrap(err, "cannot trim the state metrics cache")
		}
	}
	for inf, what := range map[cache.SharedIndexInformer]string{c.engines: EnginesResource.Resource, c.instances: InstancesResource.Resource, c.statefulSets: "statefulsets"} {
		err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			c.log.Info("State metrics: cannot list or watch; retrying", "resource", what, "error", err.Error())
		})
		if err != nil {
			return nil, errors.Wrap(err, "cannot set the state metrics watch error handler")
		}
	}
	// An engine's drain counts go when the engine does.
	_, err := c.engines.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if e, ok := obj.(*engineState); ok {
			c.drains.forget(e.claim)
		}
	}})
	if err != nil {
		return nil, errors.Wrap(err, "cannot watch engine deletions")
	}
	return c, nil
}

// compositeInformer lists and watches every composite of one kind. It is
// the dynamic informer client-go's dynamicinformer package makes, without
// that package's dependency on the informers of every API group.
func compositeInformer(dyn dynamic.Interface, gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	ri := dyn.Resource(gvr)
	return cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, o)
		},
	}, dyn), &unstructured.Unstructured{}, 0, cache.Indexers{})
}

// Run runs the informers until ctx is done.
func (c *Collector) Run(ctx context.Context) {
	done := make(chan struct{}, 3)
	for _, inf := range []cache.SharedIndexInformer{c.engines, c.instances, c.statefulSets} {
		go func() {
			inf.RunWithContext(ctx)
			done <- struct{}{}
		}()
	}
	for range 3 {
		<-done
	}
}

// Synced tells whether every informer has listed once.
func (c *Collector) Synced() bool {
	return c.engines.HasSynced() && c.instances.HasSynced() && c.statefulSets.HasSynced()
}

// SetLeading says whether this process holds the Lease and so exports the
// state series.
func (c *Collector) SetLeading(leading bool) { c.leading.Store(leading) }

// DrainCheckFailed counts a failed drain check of an engine: it
// implements metrics.EngineDrainCounter.
func (c *Collector) DrainCheckFailed(e metrics.EngineRef) {
	c.drains.inc(claim{namespace: e.Namespace, name: e.Name})
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.d.all() {
		ch <- d
	}
}

// Collect implements prometheus.Collector. Until the cache has synced only
// the exporting gauge is sent: a partial cache would be read as engines
// that vanished.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	synced := c.Synced()
	exporting := synced && c.leading.Load()
	gauge(ch, c.d.exporting, oneIf(exporting))
	if !synced {
		return
	}
	engines, eu := tracks[*engineState](c.engines.GetStore(), c.max)
	instances, iu := tracks[*instanceState](c.instances.GetStore(), c.max)
	for kind, u := range map[string]untracked{v1alpha1.XFireboltEngineKind: eu, v1alpha1.XFireboltInstanceKind: iu} {
		gauge(ch, c.d.untracked, float64(u.overLimit), kind, reasonOverLimit)
		gauge(ch, c.d.untracked, float64(u.noClaim), kind, reasonNoClaim)
		gauge(ch, c.d.untracked, float64(u.duplicate), kind, reasonDuplicate)
	}
	live := make(map[claim]bool, len(engines))
	for _, e := range engines {
		live[e.claim] = true
		ch <- prometheus.MustNewConstMetric(c.d.drainCheckErrors, prometheus.CounterValue, float64(c.drains.count(e.claim)),
			e.claim.namespace, e.claim.name, e.instance)
	}
	c.drains.prune(live)
	if !exporting {
		return
	}
	now := c.now()
	for _, e := range engines {
		c.d.engineSeries(ch, e, c.currentPods(e))
	}
	for _, i := range instances {
		c.d.instanceSeries(ch, i, now)
	}
}

// currentPods is the pod counts of the engine's current generation.
func (c *Collector) currentPods(e *engineState) pods {
	objs, err := c.statefulSets.GetIndexer().ByIndex(indexGeneration, generationKey(e.claim.namespace, e.claim.name, e.current))
	if err != nil || len(objs) == 0 {
		return pods{}
	}
	// Two StatefulSets with one generation's labels: only a hand-made one
	// could be the second. Read the first by name, so every scrape reads
	// the same.
	sort.Slice(objs, func(i, j int) bool { return objs[i].(*statefulSetState).Name < objs[j].(*statefulSetState).Name })
	s := objs[0].(*statefulSetState)
	return pods{ready: s.ready, total: s.replicas}
}

// untracked counts the composites that have no series, by reason.
type untracked struct{ overLimit, noClaim, duplicate int }

// tracks lists the store's composites that have series: those with claim
// labels, one per claim (the first by composite name), at most max, in
// claim order. Every scrape picks the same ones.
func tracks[T tracked](store cache.Store, limit int) ([]T, untracked) {
	var u untracked
	objs := store.List()
	all := make([]T, 0, len(objs))
	for _, obj := range objs {
		t, ok := obj.(T)
		if !ok {
			continue
		}
		if !t.claimOf().known() {
			u.noClaim++
			continue
		}
		all = append(all, t)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i].claimOf(), all[j].claimOf()
		if a != b {
			return a.namespace < b.namespace || (a.namespace == b.namespace && a.name < b.name)
		}
		return all[i].compositeName() < all[j].compositeName()
	})
	out := make([]T, 0, min(len(all), limit))
	var prev claim
	for _, t := range all {
		switch c := t.claimOf(); {
		case c == prev:
			u.duplicate++
		case len(out) == limit:
			u.overLimit++
		default:
			out = append(out, t)
		}
		prev = t.claimOf()
	}
	return out, u
}
