package scrape

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// TestDrainWaitsForAProcessWideSlot shows that Clients sharing a Limiter
// share MaxConcurrentScrapes: while one check holds the only slot, another
// check, of another Client, waits for it only as long as its own overall
// timeout allows and then fails closed naming the bound; once the slot is
// free, the waiting kind of check goes through.
func TestDrainWaitsForAProcessWideSlot(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t, []corev1.Pod{pod("e-g1-0", corev1.PodRunning)}, nil)
	release := make(chan struct{})
	var started atomic.Int32
	f.proxy = map[string]http.HandlerFunc{"e-g1-0": func(w http.ResponseWriter, r *http.Request) {
		if started.Add(1) == 1 {
			// The first scrape holds its slot until the test lets go.
			select {
			case <-release:
			case <-r.Context().Done():
				return
			case <-f.stop:
				return
			}
		}
		serveMetrics(textPlain, metricsText("0", "0"))(w, r)
	}}
	kube, err := corev1client.NewForConfig(&rest.Config{Host: f.srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLimiter()
	holder := New(kube, nil, Options{MaxConcurrentScrapes: 1, PodTimeout: 30 * time.Second, OverallTimeout: 60 * time.Second}, WithLimiter(l))
	waiter := New(kube, nil, Options{MaxConcurrentScrapes: 1, PodTimeout: 50 * time.Millisecond, OverallTimeout: 500 * time.Millisecond}, WithLimiter(l))
	patient := New(kube, nil, Options{MaxConcurrentScrapes: 1, PodTimeout: 30 * time.Second, OverallTimeout: 60 * time.Second}, WithLimiter(l))

	held := make(chan Verdict, 1)
	go func() { held <- holder.Drain(context.Background(), testNamespace, testSelector) }()
	for i := 0; started.Load() == 0; i++ {
		if i == 1000 {
			t.Fatal("the first scrape never started")
		}
		time.Sleep(10 * time.Millisecond)
	}

	got := waiter.Drain(context.Background(), testNamespace, testSelector)
	want := Verdict{Failing: true, Message: "pod e-g1-0: cannot scrape metrics: no free slot among the 1 process-wide scrapes (spec.scrape.maxConcurrentScrapes): drain check exceeded its overall timeout of 500ms"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a check while the only slot is held: -want, +got:\n%s", diff)
	}
	if n := started.Load(); n != 1 {
		t.Errorf("a check without a slot reached the pod: %d scrapes started, want 1", n)
	}

	queued := make(chan Verdict, 1)
	go func() { queued <- patient.Drain(context.Background(), testNamespace, testSelector) }()
	close(release)
	for name, ch := range map[string]chan Verdict{"holder": held, "queued": queued} {
		select {
		case v := <-ch:
			if diff := cmp.Diff(Verdict{Drained: true}, v); diff != "" {
				t.Errorf("%s: -want, +got:\n%s", name, diff)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s never finished", name)
		}
	}
}
