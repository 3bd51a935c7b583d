package scrape

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestDrainConcurrency shows that pods are scraped in parallel, and never
// more than Concurrency at once, without measuring time: every handler waits
// until Concurrency requests have been in flight together. A sequential
// client would never get there and every pod would time out.
func TestDrainConcurrency(t *testing.T) {
	type want struct {
		verdict     Verdict
		maxInFlight int
		pods        int
	}
	cases := map[string]struct {
		reason      string
		pods        int
		concurrency int
		want        want
	}{
		"ManyPods": {
			reason:      "40 pods with 4 at a time: all scraped, 4 in flight at most and at once.",
			pods:        40,
			concurrency: 4,
			want:        want{verdict: Verdict{Drained: true}, maxInFlight: 4, pods: 40},
		},
		"FewerPodsThanWorkers": {
			reason:      "With fewer pods than the bound, all go at once.",
			pods:        3,
			concurrency: 8,
			want:        want{verdict: Verdict{Drained: true}, maxInFlight: 3, pods: 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var (
				mu                sync.Mutex
				inFlight, maxSeen int
				full              = make(chan struct{})
				fill              sync.Once
			)
			barrier := min(tc.pods, tc.concurrency)
			f := newFakeAPI(t, nil, nil)
			handler := func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				inFlight++
				maxSeen = max(maxSeen, inFlight)
				if inFlight == barrier {
					fill.Do(func() { close(full) })
				}
				mu.Unlock()
				defer func() {
					mu.Lock()
					inFlight--
					mu.Unlock()
				}()
				select {
				case <-full:
				case <-r.Context().Done():
					return
				case <-f.stop:
					return
				}
				serveMetrics(textPlain, metricsText("0", "0"))(w, r)
			}
			f.proxy = map[string]http.HandlerFunc{}
			for i := range tc.pods {
				name := fmt.Sprintf("e-g1-%02d", i)
				f.pods = append(f.pods, pod(name, corev1.PodRunning))
				f.proxy[name] = handler
			}
			c := f.client(t, Options{Concurrency: tc.concurrency, PodTimeout: 30 * time.Second, OverallTimeout: 60 * time.Second})

			obs := c.Observe(context.Background(), testNamespace, testSelector)
			mu.Lock()
			got := want{verdict: Decide(obs), maxInFlight: maxSeen, pods: len(obs.Pods)}
			mu.Unlock()
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nObserve: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
