package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// fakeAPIServer serves what a drain check reads: the pod list of a
// generation and each pod's metrics through pods/proxy. busy names the pods
// that still serve a query.
func fakeAPIServer(t testing.TB, namespace string, pods int, gen int, busy map[string]bool) *httptest.Server {
	t.Helper()
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for i := range pods {
		list.Items = append(list.Items, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-g%d-%d", simEngine, gen, i), Namespace: namespace},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"},
		})
	}
	body, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	podsPath := "/api/v1/namespaces/" + namespace + "/pods"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == podsPath:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		case strings.HasPrefix(r.URL.Path, podsPath+"/") && strings.HasSuffix(r.URL.Path, ":9090/proxy/metrics"):
			pod := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, podsPath+"/"), ":9090/proxy/metrics")
			running := 0
			if busy[pod] {
				running = 1
			}
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprintf(w, "# TYPE firebolt_running_queries gauge\nfirebolt_running_queries %d\n# TYPE firebolt_suspended_queries gauge\nfirebolt_suspended_queries 0\n", running)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func kubeFor(t testing.TB, srv *httptest.Server) corev1client.CoreV1Interface {
	t.Helper()
	// No client-side rate limit: the benchmark measures the function, not
	// client-go's token bucket.
	k, err := corev1client.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// requestIn drives a simulated engine of the given replicas to phase and
// returns the request Crossplane would send there.
func requestIn(t testing.TB, replicas int, phase v1alpha1.EnginePhase) *fnv1.RunFunctionRequest {
	t.Helper()
	delay := 0
	s := newSim(t, scripted{podDelay: &delay}, fixtureSpec("ghcr.io/firebolt-db/engine:4.29", replicas))
	for i := 0; s.Status().Phase != v1alpha1.EnginePhaseStable; i++ {
		if i > 20 {
			t.Fatalf("never stable: %v", s.history)
		}
		s.Step()
	}
	s.Step()
	if phase != v1alpha1.EnginePhaseStable {
		s.verdict = scrape.Verdict{Message: "busy"}
		s.SetSpec(fixtureSpec("ghcr.io/firebolt-db/engine:4.30", replicas))
		for i := 0; s.Status().Phase != phase; i++ {
			if i > 20 {
				t.Fatalf("never %s: %v", phase, s.history)
			}
			s.Step()
		}
	}
	return s.Request()
}

func benchmarkFunction(b *testing.B, req *fnv1.RunFunctionRequest, prober engine.DrainProber, wantPhase string) {
	unverified(b)
	c := engine.New(prober, engine.NewEventLister(nil), engine.WithClock(func() time.Time { return responseClock }))
	f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	if got := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["phase"]; got != wantPhase {
		b.Fatalf("phase after the call: want %s, got %v; conditions %v", wantPhase, got, rsp.GetConditions())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.RunFunction(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunFunctionStable3 is the steady state of most engines: a
// stable engine of three replicas, drift check included.
func BenchmarkRunFunctionStable3(b *testing.B) {
	benchmarkFunction(b, requestIn(b, 3, v1alpha1.EnginePhaseStable), engine.NewProber(nil), "stable")
}

// BenchmarkRunFunctionStable2 is the engine of examples/render/engine-stable,
// the request `make perf` drives over gRPC: stable, two replicas.
func BenchmarkRunFunctionStable2(b *testing.B) {
	benchmarkFunction(b, requestIn(b, 2, v1alpha1.EnginePhaseStable), engine.NewProber(nil), "stable")
}

// BenchmarkRunFunctionDraining100Pods is a drain check of a 100-pod
// generation: one pod list and 100 pods/proxy metric scrapes through
// fn/scrape against a local API server, one pod still busy.
func BenchmarkRunFunctionDraining100Pods(b *testing.B) {
	req := requestIn(b, 100, v1alpha1.EnginePhaseDraining)
	srv := fakeAPIServer(b, simNamespace, 100, 0, map[string]bool{"demo-g0-42": true})
	benchmarkFunction(b, req, engine.NewProber(kubeFor(b, srv)), "draining")
}

// TestProberScrapesThroughTheAPIServer runs the real prober against the
// local API server: drained, and busy naming the pod.
func TestProberScrapesThroughTheAPIServer(t *testing.T) {
	for name, tc := range map[string]struct {
		busy      map[string]bool
		wantPhase string
	}{
		"Drained": {wantPhase: "cleaning"},
		"Busy":    {busy: map[string]bool{"demo-g0-2": true}, wantPhase: "draining"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := fakeAPIServer(t, simNamespace, 5, 0, tc.busy)
			req := requestIn(t, 5, v1alpha1.EnginePhaseDraining)
			c := engine.New(engine.NewProber(kubeFor(t, srv)), nil, engine.WithClock(func() time.Time { return responseClock }))
			f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})
			rsp, err := f.RunFunction(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			phase := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["phase"]
			if phase != tc.wantPhase {
				t.Errorf("phase: want %s, got %v (conditions %v)", tc.wantPhase, phase, rsp.GetConditions())
			}
		})
	}
}
