package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// TestProberBoundsScrapesAcrossCalls runs many drain checks at once, one
// per engine as concurrent function calls would, each allowed more
// concurrency than the process-wide bound. The API server's pods/proxy
// never sees more scrapes in flight than maxConcurrentScrapes, yet it does
// see that many, and every check still drains.
func TestProberBoundsScrapesAcrossCalls(t *testing.T) {
	const (
		engines     = 6
		podsEach    = 4
		globalBound = 3
	)
	var (
		mu                sync.Mutex
		inFlight, maxSeen int
		release           = make(chan struct{})
		stop              = make(chan struct{})
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/pods", func(w http.ResponseWriter, r *http.Request) {
		list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
		for i := range podsEach {
			list.Items = append(list.Items, corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e-g0-%d", i), Namespace: r.PathValue("ns")},
				Status:     corev1.PodStatus{Phase: corev1.PodRunning},
			})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/pods/{name}/proxy/metrics", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		maxSeen = max(maxSeen, inFlight)
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		case <-stop:
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("firebolt_running_queries 0\nfirebolt_suspended_queries 0\n"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	kube, err := corev1client.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}

	p := NewProber(kube)
	verdicts := make([]scrape.Verdict, engines)
	var wg sync.WaitGroup
	for i := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Option sets differ per call, so calls use different scrape
			// clients: the bound must hold across them, not per client.
			o := scrape.Options{Concurrency: podsEach, MaxConcurrentScrapes: globalBound,
				PodTimeout: 30*time.Second + time.Duration(i), OverallTimeout: time.Minute}
			verdicts[i] = p.Drain(context.Background(), fmt.Sprintf("ns-%d", i), labels.SelectorFromSet(labels.Set{"e": "0"}), o)
		}()
	}

	// Wait for the bound to fill, then give any scrape beyond it time to
	// show up before letting them all finish.
	for i := 0; ; i++ {
		mu.Lock()
		n := inFlight
		mu.Unlock()
		if n >= globalBound {
			break
		}
		if i == 1000 {
			t.Fatalf("only %d scrapes ever in flight, want %d", n, globalBound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	close(release)
	wg.Wait()

	want := make([]scrape.Verdict, engines)
	for i := range want {
		want[i] = scrape.Verdict{Drained: true}
	}
	if diff := cmp.Diff(want, verdicts); diff != "" {
		t.Errorf("verdicts: -want, +got:\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if maxSeen != globalBound {
		t.Errorf("at most %d scrapes in flight across %d concurrent calls of %d pods each, want exactly %d", maxSeen, engines, podsEach, globalBound)
	}
}
