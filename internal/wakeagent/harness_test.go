package wakeagent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	fakediscovery "k8s.io/client-go/kubernetes/typed/discovery/v1/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// waitBound bounds every wait for the agent to reach a state. It is a
// deadline for a test that would otherwise hang, never a threshold the
// behaviour is measured against.
const waitBound = 20 * time.Second

// fakeSlices is the typed EndpointSlice client over an object tracker, as
// the generated fake clientset wires it, telling the informer it cannot
// stream the initial list and signalling each watch it opens.
type fakeSlices struct {
	*fakediscovery.FakeDiscoveryV1
	watching chan struct{}
}

func (fakeSlices) IsWatchListSemanticsUnSupported() bool { return true }

func newFakeSlices(t *testing.T) fakeSlices {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := discoveryv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	tracker := k8stesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	f := &k8stesting.Fake{}
	f.AddReactor("*", "*", k8stesting.ObjectReaction(tracker))
	watching := make(chan struct{}, 16)
	f.AddWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := tracker.Watch(a.GetResource(), a.GetNamespace())
		if err != nil {
			return false, nil, err
		}
		select {
		case watching <- struct{}{}:
		default:
		}
		return true, w, nil
	})
	return fakeSlices{FakeDiscoveryV1: &fakediscovery.FakeDiscoveryV1{Fake: f}, watching: watching}
}

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// logLines collects log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logging.Logger {
	return logging.NewLogrLogger(funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1}))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

type harnessOptions struct {
	capacity    int
	holdTimeout time.Duration
	// unsynced leaves the informer unstarted.
	unsynced bool
}

// harness is an agent served over HTTP, its EndpointSlices in a fake
// client watched by the real informer, its stamps sent to a fake API
// server.
type harness struct {
	t       *testing.T
	slices  fakeSlices
	api     *fakeAPI
	ready   *Readiness
	demand  *Demand
	reg     *prometheus.Registry
	clock   *clock
	log     *logLines
	agent   *Agent
	srv     *httptest.Server
	stopped chan struct{}
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	if o.holdTimeout == 0 {
		o.holdTimeout = waitBound
	}
	m, reg := newTestMetrics(t)
	h := &harness{
		t:       t,
		slices:  newFakeSlices(t),
		api:     newFakeAPI(t),
		ready:   NewReadiness(),
		demand:  NewDemand(o.capacity, m),
		reg:     reg,
		clock:   &clock{now: t0},
		log:     &logLines{},
		stopped: make(chan struct{}),
	}
	h.agent = &Agent{
		Endpoints:   h.ready,
		Demand:      h.demand,
		Limiter:     NewLimiter(5*time.Second, MaxTrackedEngines),
		Stamper:     h.api.stamper(t),
		Metrics:     m,
		Log:         h.log.logger(),
		HoldTimeout: o.holdTimeout,
		Now:         h.clock.Now,
	}
	h.srv = httptest.NewServer(h.agent)
	t.Cleanup(h.srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.stopped:
		case <-time.After(waitBound):
			t.Error("the informer did not stop")
		}
	})
	if o.unsynced {
		close(h.stopped)
		return h
	}
	go func() {
		defer close(h.stopped)
		WatchEndpointSlices(ctx, h.slices, testNamespace, h.ready, h.log.logger())
	}()
	// Slices changed before the watch opens would be missed by the fake,
	// which has no resource versions to resume from.
	select {
	case <-h.slices.watching:
	case <-time.After(waitBound):
		t.Fatal("the informer opened no watch")
	}
	h.waitFor("the informer to sync", h.ready.Synced)
	return h
}

// waitFor polls cond until it holds, failing the test past waitBound.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// setSlice creates or replaces the slice name of engine's Service, with
// one endpoint per condition, and waits for the informer to deliver it.
func (h *harness) setSlice(name, engine string, ready ...*bool) {
	h.t.Helper()
	s := slice(name, engine+serviceSuffix, ready...)
	c := h.slices.EndpointSlices(testNamespace)
	_, err := c.Create(context.Background(), s, metav1.CreateOptions{})
	if errors.IsAlreadyExists(err) {
		_, err = c.Update(context.Background(), s, metav1.UpdateOptions{})
	}
	if err != nil {
		h.t.Fatal(err)
	}
	want := sliceReady(s)
	h.waitFor("the slice to reach the agent", func() bool {
		h.ready.mu.Lock()
		defer h.ready.mu.Unlock()
		got, ok := h.ready.slices[engine][testNamespace+"/"+name]
		return ok && got == want
	})
}

// response is what a /hold answer says.
type response struct {
	Code       int
	Decision   string
	RetryAfter string
	Body       string
}

// get requests path from the agent.
func (h *harness) get(ctx context.Context, path string) (response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.srv.URL+path, nil)
	if err != nil {
		return response{}, err
	}
	rsp, err := h.srv.Client().Do(req)
	if err != nil {
		return response{}, err
	}
	defer rsp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(rsp.Body, 4096))
	if err != nil {
		return response{}, err
	}
	return response{Code: rsp.StatusCode, Decision: rsp.Header.Get(DecisionHeader), RetryAfter: rsp.Header.Get("Retry-After"), Body: string(b)}, nil
}

// hold requests /hold for engine and returns the answer.
func (h *harness) hold(engine string) response {
	h.t.Helper()
	r, err := h.get(context.Background(), "/hold?engine="+engine)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// holdAsync requests /hold for engine in the background, once the agent
// holds it; the answer arrives on the channel.
func (h *harness) holdAsync(ctx context.Context, engine string) <-chan response {
	h.t.Helper()
	before := h.demand.Holds()
	ch := make(chan response, 1)
	go func() {
		r, err := h.get(ctx, "/hold?engine="+engine)
		if err != nil {
			r = response{Body: err.Error()}
		}
		ch <- r
	}()
	h.waitFor("the request to be held", func() bool { return h.demand.Holds() > before })
	return ch
}

// answer waits for a background /hold's answer.
func (h *harness) answer(ch <-chan response) response {
	h.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitBound):
		h.t.Fatal("no answer")
		return response{}
	}
}
