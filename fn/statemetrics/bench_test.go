package statemetrics

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// fleet is 100 engines as the function leaves them mid-rollout (two
// recorded renderings each, at the schema's size bound) with their
// current StatefulSets, and one instance.
func fleet() fakes {
	objs, sets := make([]k8sruntime.Object, 0, 101), make([]k8sruntime.Object, 0, 100)
	for i := range 100 {
		name := fmt.Sprintf("engine-%03d", i)
		objs = append(objs, xr(v1alpha1.XFireboltEngineKind, name+"-x", "ns", name, map[string]any{
			"spec": map[string]any{"instanceRef": "inst", "replicas": int64(3)},
			"status": map[string]any{"phase": "draining", "currentGeneration": int64(1), "activeGeneration": int64(1), "drainingGeneration": int64(0),
				"lastReconciled": "2026-11-24T08:59:00Z", "renderings": []any{rendering(0), rendering(1)},
				"conditions": []any{cond("EngineReady", "False"), cond("InstanceReady", "True")}},
		}))
		sets = append(sets, sts("ns", name, 1, 3, 3))
	}
	objs = append(objs, xr(v1alpha1.XFireboltInstanceKind, "inst-x", "ns", "inst", map[string]any{"status": map[string]any{"phase": "Ready"}}))
	return newFakes(objs, sets...)
}

// decoding lists as a real client does: every list is decoded from JSON,
// so what the cache keeps is its own memory, not the fake's.
type decoding struct{ dynamic.Interface }

func (d decoding) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return decodingResource{d.Interface.Resource(gvr)}
}

func (decoding) IsWatchListSemanticsUnSupported() bool { return true }

type decodingResource struct {
	dynamic.NamespaceableResourceInterface
}

func (r decodingResource) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := r.NamespaceableResourceInterface.List(ctx, o)
	if err != nil {
		return nil, err
	}
	b, err := l.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{}
	return out, out.UnmarshalJSON(b)
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkCacheMemory measures the heap the state metrics' informers hold
// for 100 engines (B/100engines), next to what an informer of the same
// engines that kept whole objects holds (untrimmed-B/100engines). Lists
// are decoded from JSON as a real client's are; the fake API's own copies
// are there before and after, so they cancel out.
func BenchmarkCacheMemory(b *testing.B) {
	f := fleet()
	dyn := decoding{f.dyn}
	var trimmed, whole uint64
	for b.Loop() {
		c, err := New(dyn, f.apps())
		if err != nil {
			b.Fatal(err)
		}
		trimmed = heldWhileRunning(c.Run, c.Synced)
		// The same informer, without the transform New sets.
		inf := compositeInformer(dyn, EnginesResource)
		whole = heldWhileRunning(inf.RunWithContext, inf.HasSynced)
	}
	b.ReportMetric(float64(trimmed), "B/100engines")
	b.ReportMetric(float64(whole), "untrimmed-B/100engines")
}

// heldWhileRunning runs run until synced and returns the heap it grew by.
func heldWhileRunning(run func(context.Context), synced func() bool) uint64 {
	before := heap()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	for !synced() {
		time.Sleep(time.Millisecond)
	}
	held := heap() - before
	cancel()
	<-done
	return held
}

// BenchmarkLeaseIdleRequests measures what the Lease costs at rest: the
// writes the holder makes and the reads a standby makes, per minute at
// the production RetryPeriod. It runs the two replicas with a short retry
// period and scales the counts by the number of retry periods.
func BenchmarkLeaseIdleRequests(b *testing.B) {
	const window = 80 * testRetryPeriod
	var writes, reads float64
	for b.Loop() {
		l := newLeases()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{}, 2)
		for _, id := range []string{"a", "b"} {
			go func() {
				_ = l.lease(id).Run(ctx, func(bool) {})
				done <- struct{}{}
			}()
		}
		// Let the election settle, then count.
		time.Sleep(10 * testRetryPeriod)
		w0, r0 := l.writes.Load(), l.reads.Load()
		time.Sleep(window)
		writes = float64(l.writes.Load() - w0)
		reads = float64(l.reads.Load() - r0)
		cancel()
		<-done
		<-done
	}
	perMinute := float64(time.Minute/RetryPeriod) / float64(window/testRetryPeriod)
	b.ReportMetric(writes*perMinute, "writes/min")
	b.ReportMetric(reads*perMinute, "reads/min")
}
