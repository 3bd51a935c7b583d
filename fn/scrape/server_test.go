package scrape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

const (
	testNamespace = "ns"
	textPlain     = "text/plain; version=0.0.4; charset=utf-8"
)

// testSelector is what the engine composer passes for engine e, generation 1.
var testSelector = labels.SelectorFromSet(labels.Set{"firebolt.io/engine": "e", "firebolt.io/generation": "1"})

// fakeAPI poses as the API server: the pod list of one namespace, each pod's
// pods/proxy metrics, and, for PodIP mode, a plain /metrics. Handlers that
// block also give up when the test ends, so the server can close.
type fakeAPI struct {
	pods     []corev1.Pod
	list     http.HandlerFunc            // replaces the pod list when set
	proxy    map[string]http.HandlerFunc // by pod name
	direct   http.HandlerFunc            // PodIP mode's /metrics
	stop     chan struct{}
	srv      *httptest.Server
	mu       sync.Mutex
	requests []string // proxy and direct requests, for "was it scraped?"
}

func newFakeAPI(t testing.TB, pods []corev1.Pod, proxy map[string]http.HandlerFunc) *fakeAPI {
	f := &fakeAPI{pods: pods, proxy: proxy, stop: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/pods", f.serveList)
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/pods/{name}/proxy/metrics", f.serveProxy)
	mux.HandleFunc("GET /metrics", f.serveDirect)
	f.srv = httptest.NewServer(mux)
	// Cleanups run last-in first-out: unblock handlers, then close.
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.stop) })
	return f
}

func (f *fakeAPI) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, s)
}

func (f *fakeAPI) serveList(w http.ResponseWriter, r *http.Request) {
	if f.list != nil {
		f.list(w, r)
		return
	}
	if r.PathValue("ns") != testNamespace {
		http.Error(w, "wrong namespace", http.StatusNotFound)
		return
	}
	if got := r.URL.Query().Get("labelSelector"); got != testSelector.String() {
		http.Error(w, "unexpected labelSelector "+got, http.StatusBadRequest)
		return
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: f.pods}
	b, err := json.Marshal(list)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (f *fakeAPI) serveProxy(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(r.PathValue("name"), ":9090")
	h := f.proxy[name]
	if !ok || r.PathValue("ns") != testNamespace || h == nil {
		http.Error(w, "no such pod port "+r.PathValue("name"), http.StatusNotFound)
		return
	}
	f.record("proxy " + name)
	h(w, r)
}

func (f *fakeAPI) serveDirect(w http.ResponseWriter, r *http.Request) {
	if f.direct == nil {
		http.NotFound(w, r)
		return
	}
	f.record("direct")
	f.direct(w, r)
}

// client builds a clientset the way the function does, against the fake.
// Client-side throttling is off so many checks in a row measure the check.
func (f *fakeAPI) client(t testing.TB, o Options) *Client {
	t.Helper()
	kube, err := corev1client.NewForConfig(&rest.Config{Host: f.srv.URL, QPS: -1})
	if err != nil {
		t.Fatalf("corev1client.NewForConfig: %v", err)
	}
	return New(kube, nil, o)
}

func pod(name string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: testNamespace,
			Labels:    map[string]string{"firebolt.io/engine": "e", "firebolt.io/generation": "1"},
		},
		Status: corev1.PodStatus{Phase: phase, PodIP: "127.0.0.1"},
	}
}

func metricsText(running, suspended string) string {
	return "# HELP firebolt_running_queries Queries currently executing.\n" +
		"# TYPE firebolt_running_queries gauge\n" +
		"firebolt_running_queries " + running + "\n" +
		"# HELP firebolt_suspended_queries Queries idle-waiting on a client.\n" +
		"# TYPE firebolt_suspended_queries gauge\n" +
		"firebolt_suspended_queries " + suspended + "\n"
}

// realisticBody is a drained engine's exposition with the other families an
// engine exports around the two gauges, for benchmarks.
func realisticBody() string {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "# HELP firebolt_other_%d Something else.\n# TYPE firebolt_other_%d counter\n", i, i)
		for j := range 4 {
			fmt.Fprintf(&b, "firebolt_other_%d{shard=\"%d\",kind=\"x\"} %d\n", i, j, i*j)
		}
	}
	b.WriteString(metricsText("0", "0"))
	return b.String()
}

func protoBody(t testing.TB, text string) string {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("cannot parse test body: %v", err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		if err := enc.Encode(fams[name]); err != nil {
			t.Fatalf("cannot encode test body: %v", err)
		}
	}
	return buf.String()
}

func serveMetrics(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(body))
	}
}

func serveStatus(code int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// serveBlock answers nothing until the client gives up or the test ends.
func (f *fakeAPI) serveBlock(_ http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.stop:
	}
}

// serveSlow sends a valid start, then a byte at a time, never finishing.
func (f *fakeAPI) serveSlow(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", textPlain)
	_, _ = w.Write([]byte(metricsText("0", "0")))
	rc := http.NewResponseController(w)
	for {
		if _, err := w.Write([]byte("#")); err != nil {
			return
		}
		_ = rc.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-f.stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}
