package wakeagent

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// DecisionHeader names the agent's decision on every /hold answer. Lua
// honours a non-200 only when it is present, so Envoy's own 503 for an
// unreachable agent (which lacks it) routes the request through.
const DecisionHeader = "x-firebolt-wake-decision"

// Decisions, the values of DecisionHeader.
const (
	DecisionRejected = "rejected"
	DecisionUnsynced = "unsynced"
	DecisionReady    = "ready"
	DecisionReleased = "released"
	DecisionTimeout  = "timeout"
	DecisionShed     = "shed"
	DecisionError    = "error"
)

// stampTimeout bounds one patch. The request waits for it before it is
// held, and a stamp outlives a client that disconnects meanwhile.
const stampTimeout = 5 * time.Second

// Endpoints is what the agent needs to know of engines' readiness;
// Readiness implements it.
type Endpoints interface {
	Synced() bool
	Ready(engine string) bool
	Watch(engine string) (ready bool, became <-chan struct{}, release func())
}

// Agent serves /hold and /healthz on the agent's loopback listener.
type Agent struct {
	Endpoints   Endpoints
	Demand      *Demand
	Limiter     *Limiter
	Stamper     Stamper
	Metrics     *Metrics
	Log         logging.Logger
	HoldTimeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// ServeHTTP routes a request, answering 500 (decision "error") if handling
// it panics, so one bad request never takes the gateway's agent down.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler { //nolint:errorlint // net/http's sentinel panic value is compared, not wrapped.
			panic(p)
		}
		a.Log.Info("Recovered from a panic while handling a request", "path", r.URL.Path, "panic", fmt.Sprint(p))
		answer(w, http.StatusInternalServerError, DecisionError, 0, "internal error")
	}()
	switch r.URL.Path {
	case "/hold":
		a.hold(w, r)
	case "/healthz":
		healthz(w, r)
	default:
		http.NotFound(w, r)
	}
}

// hold answers once the engine can take the request, or the agent gives up.
func (a *Agent) hold(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		answer(w, http.StatusMethodNotAllowed, DecisionRejected, 0, "only GET is served")
		return
	}
	engine := r.URL.Query().Get("engine")
	if !validEngine(engine) {
		answer(w, http.StatusBadRequest, DecisionRejected, 0, "engine must be a DNS-1035 label of at most 63 characters")
		return
	}
	if !a.Endpoints.Synced() {
		answer(w, http.StatusOK, DecisionUnsynced, 0, "endpoints not known yet; routing through")
		return
	}
	ready, became, leave := a.Endpoints.Watch(engine)
	defer leave()
	if ready {
		answer(w, http.StatusOK, DecisionReady, 0, "engine ready")
		return
	}

	now := a.now()
	a.Demand.Record(engine, now)
	a.stamp(r.Context(), engine, now)
	release, ok := a.Demand.Hold(engine)
	if !ok {
		answer(w, http.StatusServiceUnavailable, DecisionShed, 5, "too many requests held; retry shortly")
		return
	}
	defer release()

	deadline := time.NewTimer(a.HoldTimeout)
	defer deadline.Stop()
	select {
	case <-became:
		if a.Endpoints.Ready(engine) {
			answer(w, http.StatusOK, DecisionReleased, 0, "engine ready")
			return
		}
		// Ready a moment ago, gone again: a rollout in flight. The next
		// try is likely to land.
		answer(w, http.StatusServiceUnavailable, DecisionTimeout, 5, "engine readiness changed; retry shortly")
	case <-deadline.C:
		if a.Endpoints.Ready(engine) {
			answer(w, http.StatusOK, DecisionReleased, 0, "engine ready")
			return
		}
		answer(w, http.StatusServiceUnavailable, DecisionTimeout, 10, "engine is not available yet; retry shortly")
	case <-r.Context().Done():
		// The client left. Its demand and stamp stand: the engine still
		// wakes for the retry. The deferred calls free the slot.
	}
}

// stamp asks for engine to be woken, at most once per limiter interval. A
// failure is logged and counted; the request is held all the same, since
// another gateway replica's stamp may wake the engine.
func (a *Agent) stamp(ctx context.Context, engine string, now time.Time) {
	if !a.Limiter.Allow(engine, now) {
		a.Metrics.stamps.WithLabelValues(stampLimited).Inc()
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stampTimeout)
	defer cancel()
	if err := a.Stamper.Stamp(ctx, engine, now); err != nil {
		a.Metrics.stamps.WithLabelValues(stampError).Inc()
		a.Log.Info("Cannot stamp the engine's wake annotation", "engine", engine, "error", err.Error())
		return
	}
	a.Metrics.stamps.WithLabelValues(stampOK).Inc()
	a.Log.Debug("Stamped the engine's wake annotation", "engine", engine)
}

func (a *Agent) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// answer writes a /hold answer: the decision header, Retry-After when
// retryAfter is positive, and one line of text.
func answer(w http.ResponseWriter, code int, decision string, retryAfter int, msg string) {
	h := w.Header()
	h.Set(DecisionHeader, decision)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, msg)
}

// healthz says the process serves. It touches no engine state, so a probe
// never counts as demand.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintln(w, "ok")
}
