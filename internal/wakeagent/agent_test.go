package wakeagent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

// stampOf is the patch the agent sends to wake engine at at.
func stampOf(engine string, at time.Time) patch {
	return patch{
		Method:      http.MethodPatch,
		Path:        "/apis/compute.firebolt.io/v1alpha1/namespaces/gw/fireboltengines/" + engine,
		ContentType: "application/merge-patch+json",
		Body:        `{"metadata":{"annotations":{"firebolt.io/wake-requested":"` + at.UTC().Format(time.RFC3339) + `"}}}`,
	}
}

// engineSeries are an engine's series with the values given.
func engineSeries(engine string, pending, shed float64, last time.Time) map[string]float64 {
	return map[string]float64{
		`firebolt_gateway_wake_pending_holds{engine="` + engine + `"}`:                 pending,
		`firebolt_gateway_wake_shed_total{engine="` + engine + `"}`:                    shed,
		`firebolt_gateway_wake_last_demand_timestamp_seconds{engine="` + engine + `"}`: float64(last.Unix()),
	}
}

func TestHoldReleasedWhenASliceTurnsReady(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 10})
	h.setSlice("e-1", "e", ptr.To(false))

	held := h.holdAsync(context.Background(), "e")
	if diff := cmp.Diff(withStamps(1, 0, 0, engineSeries("e", 1, 0, t0)), series(t, h.reg)); diff != "" {
		t.Errorf("metrics while held (-want +got):\n%s", diff)
	}
	// The new generation's slice brings a ready endpoint.
	h.setSlice("e-2", "e", ptr.To(true))

	want := response{Code: http.StatusOK, Decision: DecisionReleased, Body: "engine ready\n"}
	if diff := cmp.Diff(want, h.answer(held)); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]patch{stampOf("e", t0)}, h.api.received()); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
	h.waitFor("the hold to be released", func() bool { return h.demand.Holds() == 0 })
	if diff := cmp.Diff(withStamps(1, 0, 0, engineSeries("e", 0, 0, t0)), series(t, h.reg)); diff != "" {
		t.Errorf("metrics after release (-want +got):\n%s", diff)
	}
}

func TestReadyFastPathDoesNotStamp(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 10})
	h.setSlice("e-1", "e", ptr.To(false), nil) // an unknown condition counts as ready

	want := response{Code: http.StatusOK, Decision: DecisionReady, Body: "engine ready\n"}
	if diff := cmp.Diff(want, h.hold("e")); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if got := h.api.received(); len(got) != 0 {
		t.Errorf("the fast path patched: %v", got)
	}
	if diff := cmp.Diff(withStamps(0, 0, 0, nil), series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestHoldTimesOut(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 10, holdTimeout: time.Millisecond})
	h.setSlice("e-1", "e", ptr.To(false))

	want := response{Code: http.StatusServiceUnavailable, Decision: DecisionTimeout, RetryAfter: "10", Body: "engine is not available yet; retry shortly\n"}
	if diff := cmp.Diff(want, h.hold("e")); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]patch{stampOf("e", t0)}, h.api.received()); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(withStamps(1, 0, 0, engineSeries("e", 0, 0, t0)), series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestShedAtCapacity(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 1})
	held := h.holdAsync(context.Background(), "a")

	// The demand is recorded and the claim stamped before the capacity
	// check: a shed request still wakes its engine.
	h.clock.Add(5 * time.Second)
	want := response{Code: http.StatusServiceUnavailable, Decision: DecisionShed, RetryAfter: "5", Body: "too many requests held; retry shortly\n"}
	if diff := cmp.Diff(want, h.hold("b")); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]patch{stampOf("a", t0), stampOf("b", t0.Add(5*time.Second))}, h.api.received()); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
	wantSeries := withStamps(2, 0, 0, engineSeries("a", 1, 0, t0))
	for k, v := range engineSeries("b", 0, 1, t0.Add(5*time.Second)) {
		wantSeries[k] = v
	}
	if diff := cmp.Diff(wantSeries, series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}

	h.setSlice("a-1", "a", ptr.To(true))
	if got := h.answer(held); got.Decision != DecisionReleased {
		t.Errorf("the held request: %+v, want released", got)
	}
}

func TestZeroCapacityShedsEverything(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 0})
	if got := h.hold("e"); got.Decision != DecisionShed || got.Code != http.StatusServiceUnavailable {
		t.Errorf("answer: %+v, want 503 shed", got)
	}
	if diff := cmp.Diff([]patch{stampOf("e", t0)}, h.api.received()); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
}

func TestUnsyncedRoutesThrough(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 10, unsynced: true})
	want := response{Code: http.StatusOK, Decision: DecisionUnsynced, Body: "endpoints not known yet; routing through\n"}
	if diff := cmp.Diff(want, h.hold("e")); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if got := h.api.received(); len(got) != 0 {
		t.Errorf("patched while unsynced: %v", got)
	}
	if diff := cmp.Diff(withStamps(0, 0, 0, nil), series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestRejectsInvalidNames(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 10})
	for name, query := range map[string]string{
		"Missing":        "",
		"Empty":          "?engine=",
		"Uppercase":      "?engine=Engine",
		"LeadingDigit":   "?engine=1engine",
		"Underscore":     "?engine=my_engine",
		"Dot":            "?engine=my.engine",
		"TrailingDash":   "?engine=engine-",
		"TooLong":        "?engine=" + strings.Repeat("a", 64),
		"PathCharacters": "?engine=..%2Fsecrets",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := h.get(context.Background(), "/hold"+query)
			if err != nil {
				t.Fatal(err)
			}
			want := response{Code: http.StatusBadRequest, Decision: DecisionRejected, Body: "engine must be a DNS-1035 label of at most 63 characters\n"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
	if got := h.api.received(); len(got) != 0 {
		t.Errorf("an invalid name was stamped: %v", got)
	}
	if diff := cmp.Diff(withStamps(0, 0, 0, nil), series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	// The longest valid name is accepted.
	if !validEngine(strings.Repeat("a", 63)) {
		t.Error("a 63-character name is invalid")
	}
}

func TestClientDisconnectKeepsDemandAndStamp(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 1})
	ctx, cancel := context.WithCancel(context.Background())
	answered := h.holdAsync(ctx, "e")
	cancel()
	if got := h.answer(answered); got.Code != 0 {
		t.Errorf("the client got an answer after leaving: %+v", got)
	}
	h.waitFor("the slot to be freed", func() bool { return h.demand.Holds() == 0 })

	if last, ok := h.demand.Last("e"); !ok || !last.Equal(t0) {
		t.Errorf("demand after the client left: %v %v, want %v", last, ok, t0)
	}
	if diff := cmp.Diff([]patch{stampOf("e", t0)}, h.api.received()); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(withStamps(1, 0, 0, engineSeries("e", 0, 0, t0)), series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	// The freed slot takes the next request.
	h.clock.Add(time.Second)
	held := h.holdAsync(context.Background(), "e")
	h.setSlice("e-1", "e", ptr.To(true))
	if got := h.answer(held); got.Decision != DecisionReleased {
		t.Errorf("the next request: %+v, want released", got)
	}
}

func TestHealthzNeverStamps(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 10})
	for _, path := range []string{"/healthz", "/healthz?engine=e"} {
		got, err := h.get(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(response{Code: http.StatusOK, Body: "ok\n"}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
	if got := h.api.received(); len(got) != 0 {
		t.Errorf("/healthz patched: %v", got)
	}
	if diff := cmp.Diff(withStamps(0, 0, 0, nil), series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestStampRateLimit(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 10, holdTimeout: time.Millisecond})
	h.hold("e")
	h.clock.Add(4 * time.Second)
	h.hold("e") // within the interval: no patch
	h.hold("f") // another engine has its own limit
	h.clock.Add(time.Second)
	h.hold("e") // the interval is over

	want := []patch{stampOf("e", t0), stampOf("f", t0.Add(4*time.Second)), stampOf("e", t0.Add(5*time.Second))}
	if diff := cmp.Diff(want, h.api.received()); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
	wantSeries := withStamps(3, 0, 1, engineSeries("e", 0, 0, t0.Add(5*time.Second)))
	for k, v := range engineSeries("f", 0, 0, t0.Add(4*time.Second)) {
		wantSeries[k] = v
	}
	if diff := cmp.Diff(wantSeries, series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestStampFailureStillHolds(t *testing.T) {
	h := newHarness(t, harnessOptions{capacity: 10})
	h.api.failWith(http.StatusForbidden)

	held := h.holdAsync(context.Background(), "e")
	h.setSlice("e-1", "e", ptr.To(true))
	if got := h.answer(held); got.Decision != DecisionReleased {
		t.Errorf("answer: %+v, want released", got)
	}
	if diff := cmp.Diff(withStamps(0, 1, 0, engineSeries("e", 0, 0, t0)), series(t, h.reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	log := h.log.String()
	if !strings.Contains(log, "Cannot stamp the engine's wake annotation") || !strings.Contains(log, `"engine"="e"`) {
		t.Errorf("the failure is not logged with its engine:\n%s", log)
	}
	if strings.Contains(log, "secret-token") {
		t.Errorf("the log carries the token:\n%s", log)
	}
}

// endpointsStub answers readiness questions as told, for the races the
// informer cannot be made to produce on cue.
type endpointsStub struct {
	// readyLater is Ready's answer after Watch said not ready.
	readyLater bool
	// woken closes Watch's channel at once.
	woken bool
	// panics makes Synced panic.
	panics bool
}

func (s endpointsStub) Synced() bool {
	if s.panics {
		panic("boom")
	}
	return true
}

func (s endpointsStub) Ready(string) bool { return s.readyLater }

func (s endpointsStub) Watch(string) (bool, <-chan struct{}, func()) {
	ch := make(chan struct{})
	if s.woken {
		close(ch)
	}
	return false, ch, func() {}
}

func TestHoldRaces(t *testing.T) {
	cases := map[string]struct {
		endpoints endpointsStub
		timeout   time.Duration
		want      response
	}{
		"WokenButFlappedAway": {
			endpoints: endpointsStub{woken: true, readyLater: false},
			timeout:   waitBound,
			want:      response{Code: http.StatusServiceUnavailable, Decision: DecisionTimeout, RetryAfter: "5", Body: "engine readiness changed; retry shortly\n"},
		},
		"ReadyAtTheDeadline": {
			endpoints: endpointsStub{readyLater: true},
			timeout:   time.Millisecond,
			want:      response{Code: http.StatusOK, Decision: DecisionReleased, Body: "engine ready\n"},
		},
		"Panic": {
			endpoints: endpointsStub{panics: true},
			timeout:   time.Millisecond,
			want:      response{Code: http.StatusInternalServerError, Decision: DecisionError, Body: "internal error\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, _ := newTestMetrics(t)
			api := newFakeAPI(t)
			a := &Agent{
				Endpoints: tc.endpoints, Demand: NewDemand(1, m), Limiter: NewLimiter(time.Second, 8),
				Stamper: api.stamper(t), Metrics: m, Log: (&logLines{}).logger(), HoldTimeout: tc.timeout,
			}
			w := httptest.NewRecorder()
			a.ServeHTTP(w, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/hold?engine=e", nil))
			got := response{Code: w.Code, Decision: w.Header().Get(DecisionHeader), RetryAfter: w.Header().Get("Retry-After"), Body: w.Body.String()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if got := a.Demand.Holds(); got != 0 {
				t.Errorf("%d holds left taken", got)
			}
		})
	}
}

func TestOtherRequests(t *testing.T) {
	m, _ := newTestMetrics(t)
	a := &Agent{Endpoints: NewReadiness(), Demand: NewDemand(1, m), Metrics: m, Log: (&logLines{}).logger()}
	cases := map[string]struct {
		method, path string
		wantCode     int
		wantDecision string
	}{
		"UnknownPath": {method: http.MethodGet, path: "/demand", wantCode: http.StatusNotFound},
		"Post":        {method: http.MethodPost, path: "/hold?engine=e", wantCode: http.StatusMethodNotAllowed, wantDecision: DecisionRejected},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			a.ServeHTTP(w, httptest.NewRequestWithContext(t.Context(), tc.method, tc.path, nil))
			if w.Code != tc.wantCode || w.Header().Get(DecisionHeader) != tc.wantDecision {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Header().Get(DecisionHeader), tc.wantCode, tc.wantDecision)
			}
		})
	}
}
