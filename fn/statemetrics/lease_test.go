package statemetrics

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	coordinationv1 "k8s.io/api/coordination/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Short timing for tests. The Lease records its duration in whole
// seconds, which is what a standby compares with, so it takes 2 s; the
// retries, which pace the test, are short.
const (
	testLeaseDuration = 2 * time.Second
	testRenewDeadline = 1500 * time.Millisecond
	testRetryPeriod   = 50 * time.Millisecond
)

// leases is a fake API for Leases with the API server's optimistic
// concurrency: an update names the resourceVersion it read, and fails with
// a conflict when another write came in between. Writes counts the
// creates and updates, reads the gets.
type leases struct {
	*fake.Clientset
	writes, reads atomic.Int64
}

func newLeases() *leases {
	l := &leases{Clientset: fake.NewClientset()}
	tracker := l.Tracker()
	gvr := coordinationv1.SchemeGroupVersion.WithResource("leases")
	l.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		l.reads.Add(1)
		return false, nil, nil
	})
	l.PrependReactor("create", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l.writes.Add(1)
		lease := a.(k8stesting.CreateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		lease.ResourceVersion = "1"
		if err := tracker.Create(gvr, lease, lease.Namespace); err != nil {
			return true, nil, err
		}
		return true, lease, nil
	})
	l.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		l.writes.Add(1)
		lease := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		cur, err := tracker.Get(gvr, lease.Namespace, lease.Name)
		if err != nil {
			return true, nil, err
		}
		rv := cur.(*coordinationv1.Lease).ResourceVersion
		if lease.ResourceVersion != rv {
			return true, nil, kerrors.NewConflict(gvr.GroupResource(), lease.Name, nil)
		}
		n, _ := strconv.Atoi(rv)
		lease.ResourceVersion = strconv.Itoa(n + 1)
		if err := tracker.Update(gvr, lease, lease.Namespace); err != nil {
			return true, nil, err
		}
		return true, lease, nil
	})
	return l
}

func (l *leases) lease(identity string) Lease {
	return Lease{Client: l.CoordinationV1(), Namespace: "crossplane-system", Name: "function-firebolt-state-metrics", Identity: identity,
		Duration: testLeaseDuration, RenewDeadline: testRenewDeadline, RetryPeriod: testRetryPeriod}
}

func (l *leases) holder(t *testing.T) string {
	t.Helper()
	got, err := l.CoordinationV1().Leases("crossplane-system").Get(context.Background(), "function-firebolt-state-metrics", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.HolderIdentity == nil {
		return ""
	}
	return *got.Spec.HolderIdentity
}

// replica is one function process: its collector and its campaign.
type replica struct {
	name   string
	c      *Collector
	cancel context.CancelFunc
	done   chan struct{}
}

// TestOneReplicaExports runs two replicas of the function against one
// Lease: exactly one exports the state series while the other keeps its
// cache warm; when the exporter stops, it releases the Lease and the other
// takes over.
func TestOneReplicaExports(t *testing.T) {
	l := newLeases()
	f := world()
	replicas := make([]*replica, 0, 2)
	for _, name := range []string{"a", "b"} {
		c := start(t, f, WithClock((&clock{t: epoch}).now))
		ctx, cancel := context.WithCancel(context.Background())
		r := &replica{name: name, c: c, cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(r.done)
			if err := l.lease(name).Run(ctx, c.SetLeading); err != nil {
				t.Error(err)
			}
		}()
		t.Cleanup(func() { cancel(); <-r.done })
		replicas = append(replicas, r)
	}
	exporters := func() []*replica {
		var out []*replica
		for _, r := range replicas {
			if exporting(t, r.c) {
				out = append(out, r)
			}
		}
		return out
	}
	waitFor(t, "one replica to export", func() bool { return len(exporters()) == 1 })
	// Over many renewals, never two.
	for range 40 {
		if n := len(exporters()); n != 1 {
			t.Fatalf("%d replicas export at once, want 1", n)
		}
		time.Sleep(testRetryPeriod / 4)
	}
	leader := exporters()[0]
	standby := replicas[0]
	if standby == leader {
		standby = replicas[1]
	}
	if got := l.holder(t); got != leader.name {
		t.Errorf("the Lease is held by %q, but %q exports", got, leader.name)
	}
	if n := testutil.CollectAndCount(leader.c, "firebolt_engine_status_phase"); n != 14 {
		t.Errorf("the exporter sends %d engine phase series, want 14 (two engines, seven phases)", n)
	}
	want := exportingHelp + "function_firebolt_state_metrics_exporting 0\n" +
		untrackedSeries([3]int{0, 1, 1}, [3]int{0, 0, 0}) +
		drainHelp +
		`firebolt_engine_drain_check_errors_total{instance="inst",name="demo",namespace="ns1"} 0` + "\n" +
		`firebolt_engine_drain_check_errors_total{instance="inst",name="rolling",namespace="ns1"} 0` + "\n"
	if err := testutil.CollectAndCompare(standby.c, strings.NewReader(want)); err != nil {
		t.Errorf("the standby exports state series:\n%v", err)
	}

	// The exporter stops: it releases the Lease, and the standby takes
	// over well before the Lease would have expired.
	leader.cancel()
	<-leader.done
	if exporting(t, leader.c) {
		t.Error("a stopped replica still exports")
	}
	if got := l.holder(t); got != "" && got != standby.name {
		t.Errorf("after the exporter stopped the Lease is held by %q", got)
	}
	waitFor(t, "the standby to take over", func() bool { return exporting(t, standby.c) })
	if got := l.holder(t); got != standby.name {
		t.Errorf("the Lease is held by %q, but %q exports", got, standby.name)
	}
}

func exporting(t *testing.T, c *Collector) bool {
	t.Helper()
	return testutil.CollectAndCount(c, "firebolt_engine_status_phase") > 0
}
