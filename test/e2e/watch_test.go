package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// genWatch follows every object of one engine that carries a generation
// label, through watch events, so that a third generation existing even
// for an instant is seen.
type genWatch struct {
	mu    sync.Mutex
	live  map[string]liveObject // kind/name
	max   int
	atMax string
	// maxAll counts objects already being deleted too.
	maxAll   int
	atMaxAll string
	history  []string
	cancel   context.CancelFunc
	done     sync.WaitGroup
}

// watchGenerations starts following engine's StatefulSets, Services and
// ConfigMaps. The scenario's cleanup stops it.
func (s *scenario) watchGenerations(engine string) *genWatch {
	ctx, cancel := context.WithCancel(s.ctx)
	w := &genWatch{live: map[string]liveObject{}, cancel: cancel}
	for _, r := range []schema.GroupVersionResource{
		{Group: "apps", Version: "v1", Resource: "statefulsets"},
		{Version: "v1", Resource: "services"},
		{Version: "v1", Resource: "configmaps"},
	} {
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			w.follow(ctx, s.ns, engine, r)
		}()
	}
	s.t.Cleanup(w.stop)
	return w
}

func (w *genWatch) stop() {
	w.cancel()
	w.done.Wait()
}

func (w *genWatch) follow(ctx context.Context, ns, engine string, r schema.GroupVersionResource) {
	// Watches last; the admin client bounds every request to 30s.
	cfg := rest.CopyConfig(cp.Admin)
	cfg.Timeout = 0
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return
	}
	ri := dyn.Resource(r).Namespace(ns)
	opts := metav1.ListOptions{LabelSelector: labelEngine + "=" + engine}
	for ctx.Err() == nil {
		l, err := ri.List(ctx, opts)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for i := range l.Items {
			w.record(watch.Added, r.Resource, &l.Items[i])
		}
		wo := opts
		wo.ResourceVersion = l.GetResourceVersion()
		wi, err := ri.Watch(ctx, wo)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for ev := range wi.ResultChan() {
			m, err := metaOf(ev.Object)
			if err != nil {
				continue
			}
			w.record(ev.Type, r.Resource, m)
		}
		wi.Stop()
	}
}

func metaOf(o any) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("not an object: %T", o)
	}
	return m, nil
}

// liveObject is an object the watch has seen and not yet seen deleted.
type liveObject struct {
	Generation  string
	Terminating bool
}

func (w *genWatch) record(t watch.EventType, kind string, m metav1.Object) {
	gen := m.GetLabels()[labelGeneration]
	if gen == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := kind + "/" + m.GetName()
	now := time.Now().Format("15:04:05.000")
	switch t {
	case watch.Added, watch.Modified:
		o := liveObject{Generation: gen, Terminating: m.GetDeletionTimestamp() != nil}
		prev, ok := w.live[key]
		switch {
		case !ok:
			w.history = append(w.history, fmt.Sprintf("%s + %s (gen %s)", now, key, gen))
		case o.Terminating && !prev.Terminating:
			w.history = append(w.history, fmt.Sprintf("%s ~ %s (gen %s) deleting", now, key, gen))
		}
		w.live[key] = o
	case watch.Deleted:
		if _, ok := w.live[key]; ok {
			w.history = append(w.history, fmt.Sprintf("%s - %s (gen %s)", now, key, gen))
		}
		delete(w.live, key)
	default:
		return
	}
	live, all := map[string]bool{}, map[string]bool{}
	var objs []string
	for k, o := range w.live {
		all[o.Generation] = true
		state := ""
		if o.Terminating {
			state = " (deleting)"
		} else {
			live[o.Generation] = true
		}
		objs = append(objs, k+"@"+o.Generation+state)
	}
	sort.Strings(objs)
	if len(live) > w.max {
		w.max, w.atMax = len(live), strings.Join(objs, ", ")
	}
	if len(all) > w.maxAll {
		w.maxAll, w.atMaxAll = len(all), strings.Join(objs, ", ")
	}
}

// check fails the test if objects of more than two generations ever
// existed at once. Objects Crossplane already deletes (in the foreground, so
// they linger while their pods go) do not count: the engine has let go of
// them, as the seed's "abandon, then create on the next reconcile" does. Such
// overlaps are logged.
func (w *genWatch) check(s *scenario) {
	s.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.max > 2 {
		s.t.Errorf("objects of %d generations existed at once: %s\nhistory:\n%s", w.max, w.atMax, strings.Join(w.history, "\n"))
		return
	}
	if w.maxAll > 2 {
		s.t.Logf("objects of %d generations existed at once, counting those being deleted: %s\nhistory:\n%s", w.maxAll, w.atMaxAll, strings.Join(w.history, "\n"))
	}
}
