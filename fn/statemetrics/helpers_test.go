package statemetrics

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

var epoch = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// clock is a settable clock, safe for the informers' goroutines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// xr is a composite of kind with claim labels when claimNS is set.
func xr(kind, name, claimNS, claimName string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(v1alpha1.SchemeGroupVersion.String())
	u.SetKind(kind)
	u.SetName(name)
	if claimNS != "" {
		u.SetLabels(map[string]string{composite.LabelClaimNamespace: claimNS, composite.LabelClaimName: claimName})
	}
	return u
}

func cond(typ, status string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": "Because", "message": "a message the series never read",
		"lastTransitionTime": "2026-11-24T08:00:00Z"}
}

// rendering is a recorded generation as big as the schema allows, which
// the cache must not keep.
func rendering(gen int64) map[string]any {
	return map[string]any{"generation": gen, "hash": "0123456789abcdef", "objects": strings.Repeat("H4sIAAAAAAAA", 262144/12)}
}

func sts(ns, engine string, gen, replicas, ready int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: engine + "-g" + strconv.Itoa(int(gen)), Namespace: ns,
			Labels: map[string]string{"firebolt.io/engine": engine, "firebolt.io/generation": strconv.Itoa(int(gen))}},
		Status: appsv1.StatefulSetStatus{Replicas: replicas, ReadyReplicas: ready},
	}
}

// fakes are the API the collector reads.
type fakes struct {
	dyn  *dynamicfake.FakeDynamicClient
	kube *fake.Clientset
}

func newFakes(objs []runtime.Object, sets ...runtime.Object) fakes {
	return fakes{
		dyn: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
			EnginesResource:   "XFireboltEngineList",
			InstancesResource: "XFireboltInstanceList",
		}, objs...),
		kube: fake.NewClientset(sets...),
	}
}

// apps is the fake's apps client. The fake cannot stream a list as a
// watch, and says so only on its clientset, not on the typed client.
func (f fakes) apps() appsv1client.StatefulSetsGetter {
	return listOnly{f.kube.AppsV1()}
}

type listOnly struct {
	appsv1client.StatefulSetsGetter
}

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

// start runs a collector over f until the test ends and waits for its
// cache to sync.
func start(t *testing.T, f fakes, o ...Option) *Collector {
	t.Helper()
	c, err := New(f.dyn, f.apps(), o...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the cache to sync", c.Synced)
	return c
}

// waitFor polls cond for at most ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
