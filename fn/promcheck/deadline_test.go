package promcheck

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// shortTimeout keeps the tests that wait for a timeout fast; the servers
// they query never answer, so the outcome does not depend on it.
const shortTimeout = 100 * time.Millisecond

// TestRunDeadlines shows which deadline or cancellation cut a query short is
// named: the Client's timeout, the caller's deadline, the caller's cancel,
// before or during the request.
func TestRunDeadlines(t *testing.T) {
	cases := map[string]struct {
		timeout time.Duration
		// ctx derives the Run's context; entered is closed once the
		// request reached the server.
		ctx  func(ctx context.Context, entered <-chan struct{}) (context.Context, context.CancelFunc)
		want Outcome
	}{
		"ClientTimeout": {
			timeout: shortTimeout,
			ctx: func(ctx context.Context, _ <-chan struct{}) (context.Context, context.CancelFunc) {
				return ctx, func() {}
			},
			want: Outcome{Cause: CauseTimeout, Message: "query timed out after 100ms"},
		},
		"CallerDeadline": {
			ctx: func(ctx context.Context, _ <-chan struct{}) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, shortTimeout)
			},
			want: Outcome{Cause: CauseTimeout, Message: "query reached the caller's deadline"},
		},
		"CallerDeadlineWithCause": {
			ctx: func(ctx context.Context, _ <-chan struct{}) (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(ctx, shortTimeout, errors.New("function call budget spent"))
			},
			want: Outcome{Cause: CauseTimeout, Message: "query reached the caller's deadline: function call budget spent"},
		},
		"CanceledDuringQuery": {
			ctx: func(ctx context.Context, entered <-chan struct{}) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				go func() {
					<-entered
					cancel()
				}()
				return ctx, cancel
			},
			want: Outcome{Cause: CauseCanceled, Message: "query was canceled: context canceled"},
		},
		"CanceledBeforeRun": {
			ctx: func(ctx context.Context, _ <-chan struct{}) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				cancel()
				return ctx, cancel
			},
			want: Outcome{Cause: CauseCanceled, Message: "query was canceled: context canceled"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			entered := make(chan struct{})
			srv := newServer(t, block(entered))
			ctx, cancel := tc.ctx(t.Context(), entered)
			defer cancel()
			got := check(t, newClient(WithTimeout(tc.timeout)).Run(ctx, query(srv.URL), Credentials{}, testTime))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestRunNoSlot fills a Limiter of one slot with a query the server holds,
// and shows a second query gives up when its time is up, without reaching
// the server; once the first query ends, its slot serves the next.
func TestRunNoSlot(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var requests atomic.Int32
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		hold(r)
		entered <- struct{}{}
		select {
		case <-release:
			serveJSON(http.StatusOK, vector(1))(w, r)
		case <-r.Context().Done():
		}
	}))
	l := NewLimiter(1)
	holder := New(WithLimiter(l))
	first := make(chan Outcome, 1)
	go func() { first <- holder.Run(t.Context(), query(srv.URL), Credentials{}, testTime) }()
	<-entered

	waiter := New(WithLimiter(l), WithTimeout(shortTimeout))
	got := check(t, waiter.Run(t.Context(), query(srv.URL), Credentials{}, testTime))
	want := Outcome{Cause: CauseNoSlot, Message: "no free query slot: all 1 slots for Prometheus queries stayed taken until the check timed out after 100ms"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run while the slot is taken: -want, +got:\n%s", diff)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("server saw %d requests while the slot was taken, want 1", n)
	}

	close(release)
	success := Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"}
	if diff := cmp.Diff(success, check(t, <-first)); diff != "" {
		t.Errorf("Run holding the slot: -want, +got:\n%s", diff)
	}
	got = check(t, New(WithLimiter(l)).Run(t.Context(), query(srv.URL), Credentials{}, testTime))
	if diff := cmp.Diff(success, got); diff != "" {
		t.Errorf("Run after the slot was freed: -want, +got:\n%s", diff)
	}
}

// TestRunRefusesConfig shows a URL admission would refuse, or an empty
// expression, fails before any request, without quoting the URL (it may
// carry a password).
func TestRunRefusesConfig(t *testing.T) {
	var requests atomic.Int32
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		serveJSON(http.StatusOK, vector(1))(w, r)
	}))
	host := srv.Listener.Addr().String()
	cases := map[string]struct {
		q    func() (url, expr string)
		want string
	}{
		"NotHTTP":                 {q: func() (string, string) { return "ftp://" + host, testExpr }, want: "invalid query: the URL must be an absolute http or https URL"},
		"Relative":                {q: func() (string, string) { return "/api", testExpr }, want: "invalid query: the URL must be an absolute http or https URL"},
		"Empty":                   {q: func() (string, string) { return "", testExpr }, want: "invalid query: the URL must be an absolute http or https URL"},
		"NoHost":                  {q: func() (string, string) { return "http://:9090", testExpr }, want: "invalid query: the URL must name a host"},
		"Opaque":                  {q: func() (string, string) { return "http:" + host, testExpr }, want: "invalid query: the URL must name a host"},
		"UserInfo":                {q: func() (string, string) { return "http://admin:hunter2@" + host, testExpr }, want: "invalid query: the URL must not carry credentials: name a Secret in secretRef instead"},
		"Query":                   {q: func() (string, string) { return "http://" + host + "/?x=1", testExpr }, want: "invalid query: the URL must have no query: the function appends /api/v1/query"},
		"EmptyQuery":              {q: func() (string, string) { return "http://" + host + "/?", testExpr }, want: "invalid query: the URL must have no query: the function appends /api/v1/query"},
		"Fragment":                {q: func() (string, string) { return "http://" + host + "/#x", testExpr }, want: "invalid query: the URL must have no fragment"},
		"Unparsable":              {q: func() (string, string) { return "http://admin:hunter2@" + host + "/%zz", testExpr }, want: "invalid query: the URL cannot be parsed"},
		"EmptyExpr":               {q: func() (string, string) { return "http://" + host, " \n" }, want: "invalid query: the expression is empty"},
		"SchemeIsCaseInsensitive": {q: func() (string, string) { return "HTTP://" + host + "/?x", testExpr }, want: "invalid query: the URL must have no query: the function appends /api/v1/query"},
		"EmptyFragment":           {q: func() (string, string) { return "http://" + host + "/#", testExpr }, want: "invalid query: the URL must have no fragment"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			u, expr := tc.q()
			got := run(t, newClient(), v1alpha1.PrometheusQuery{Expr: expr, URL: u}, Credentials{})
			if diff := cmp.Diff(Outcome{Cause: CauseConfig, Message: tc.want}, got); diff != "" {
				t.Errorf("Run: -want, +got:\n%s", diff)
			}
		})
	}
	t.Cleanup(func() {
		if n := requests.Load(); n != 0 {
			t.Errorf("server saw %d requests, want none", n)
		}
	})
}

// TestRunSchemelessURLIsHTTP: a URL without a scheme, as the seed's own
// example writes it (prom:9000/xx), is plain HTTP to that host, port and
// path; one that is not host[:port][/path] is still refused without being
// quoted.
func TestRunSchemelessURLIsHTTP(t *testing.T) {
	paths := make(chan string, 4)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		serveJSON(http.StatusOK, vector(1))(w, r)
	}))
	host := srv.Listener.Addr().String()
	for name, tc := range map[string]struct{ url, path string }{
		"HostPort":     {host, "/api/v1/query"},
		"HostPortPath": {host + "/prometheus", "/prometheus/api/v1/query"},
	} {
		t.Run(name, func(t *testing.T) {
			got := run(t, newClient(), query(tc.url), Credentials{})
			if diff := cmp.Diff(Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"}, got); diff != "" {
				t.Errorf("Run(%q): -want, +got:\n%s", tc.url, diff)
			}
			if p := <-paths; p != tc.path {
				t.Errorf("Run(%q) asked for %s, want %s", tc.url, p, tc.path)
			}
		})
	}
	got := run(t, newClient(), query("admin:hunter2@"+host), Credentials{})
	if diff := cmp.Diff(Outcome{Cause: CauseConfig, Message: "invalid query: the URL must be an absolute http or https URL"}, got); diff != "" {
		t.Errorf("Run with userinfo and no scheme: -want, +got:\n%s", diff)
	}
}
