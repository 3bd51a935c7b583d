package promcheck

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a server that records the Authorization header of every
// request it gets, then answers with next.
type recorder struct {
	mu   sync.Mutex
	auth []string
	next http.Handler
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.auth = append(rec.auth, r.Header.Get("Authorization"))
	rec.mu.Unlock()
	rec.next.ServeHTTP(w, r)
}

func (rec *recorder) seen() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.auth...)
}

// TestRunSendsCredentials shows the header each kind of credentials sends.
func TestRunSendsCredentials(t *testing.T) {
	cases := map[string]struct {
		secret map[string]string
		want   []string
	}{
		"None":   {want: []string{""}},
		"Bearer": {secret: map[string]string{KeyToken: "t0ken"}, want: []string{"Bearer t0ken"}},
		// base64("admin:pa:ss") — a colon is fine in a password.
		"Basic": {secret: map[string]string{KeyUsername: "admin", KeyPassword: "pa:ss"}, want: []string{"Basic YWRtaW46cGE6c3M="}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{next: serveQuery(vector(1))}
			srv := newServer(t, rec)
			var creds Credentials
			if tc.secret != nil {
				creds = mustCredentials(t, tc.secret)
			}
			got := run(t, newClient(), query(srv.URL), creds)
			if diff := cmp.Diff(Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"}, got); diff != "" {
				t.Errorf("Run: -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, rec.seen()); diff != "" {
				t.Errorf("Authorization headers: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestRunRedirects shows a redirect is followed, credentials included, only
// to the configured scheme, host and port, at most MaxRedirects times; a
// refused one never reaches its target.
func TestRunRedirects(t *testing.T) {
	const token = "t0ken"
	type servers struct {
		// home is the configured server, other a second one on loopback.
		home, other *httptest.Server
	}
	redirectWith := func(code int, to func(s servers, r *http.Request) string) func(s *servers) http.HandlerFunc {
		return func(s *servers) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/moved/") {
					serveQuery(vector(1))(w, r)
					return
				}
				http.Redirect(w, r, to(*s, r), code)
			}
		}
	}
	redirectTo := func(to func(s servers, r *http.Request) string) func(s *servers) http.HandlerFunc {
		return redirectWith(http.StatusTemporaryRedirect, to)
	}
	cases := map[string]struct {
		home      func(s *servers) http.HandlerFunc
		want      func(s servers) Outcome
		wantHome  int
		wantOther int
	}{
		"SameOrigin": {
			home:     redirectTo(func(_ servers, _ *http.Request) string { return "/moved/api/v1/query" }),
			want:     func(servers) Outcome { return Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"} },
			wantHome: 2,
		},
		// Go follows a 302 to a POST with a GET without the form: the
		// expression is lost, and Prometheus says so.
		"SameOriginFoundLosesTheQuery": {
			home: redirectWith(http.StatusFound, func(_ servers, _ *http.Request) string { return "/moved/api/v1/query" }),
			want: func(servers) Outcome {
				return Outcome{Cause: CauseAPIError, Message: "query failed: server answered 400: bad_data error: unexpected request"}
			},
			wantHome: 2,
		},
		"OtherPort": {
			home: redirectTo(func(s servers, _ *http.Request) string { return s.other.URL + "/api/v1/query" }),
			want: func(s servers) Outcome {
				return Outcome{Cause: CauseRedirect, Message: "query failed: refused a redirect to " + s.other.URL +
					": only redirects to the configured scheme, host and port are followed"}
			},
			wantHome: 1,
		},
		"OtherHostName": {
			home: redirectTo(func(s servers, _ *http.Request) string {
				return "http://localhost:" + s.home.URL[strings.LastIndex(s.home.URL, ":")+1:] + "/api/v1/query"
			}),
			want: func(s servers) Outcome {
				return Outcome{Cause: CauseRedirect, Message: "query failed: refused a redirect to http://localhost:" +
					s.home.URL[strings.LastIndex(s.home.URL, ":")+1:] + ": only redirects to the configured scheme, host and port are followed"}
			},
			wantHome: 1,
		},
		"OtherScheme": {
			home: redirectTo(func(s servers, _ *http.Request) string {
				return "https" + strings.TrimPrefix(s.home.URL, "http") + "/api/v1/query"
			}),
			want: func(s servers) Outcome {
				return Outcome{Cause: CauseRedirect, Message: "query failed: refused a redirect to https" + strings.TrimPrefix(s.home.URL, "http") +
					": only redirects to the configured scheme, host and port are followed"}
			},
			wantHome: 1,
		},
		"TooMany": {
			home: redirectTo(func(_ servers, r *http.Request) string { return r.URL.Path }),
			want: func(servers) Outcome {
				return Outcome{Cause: CauseRedirect, Message: "query failed: stopped after 3 redirects"}
			},
			wantHome: MaxRedirects + 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var s servers
			homeRec := &recorder{next: tc.home(&s)}
			otherRec := &recorder{next: serveQuery(vector(1))}
			s.home = newServer(t, homeRec)
			s.other = newServer(t, otherRec)
			got := run(t, newClient(), query(s.home.URL), mustCredentials(t, map[string]string{KeyToken: token}))
			if diff := cmp.Diff(tc.want(s), got); diff != "" {
				t.Errorf("Run: -want, +got:\n%s", diff)
			}
			wantHome := make([]string, tc.wantHome)
			for i := range wantHome {
				wantHome[i] = "Bearer " + token
			}
			if diff := cmp.Diff(wantHome, homeRec.seen()); diff != "" {
				t.Errorf("configured server's Authorization headers: -want, +got:\n%s", diff)
			}
			if got := otherRec.seen(); len(got) != 0 {
				t.Errorf("the other server got %d requests, with Authorization headers %q; want none", len(got), got)
			}
		})
	}
}

// canned is a RoundTripper that records the Authorization header of each
// request and answers it without any network.
type canned struct{ auth []string }

func (c *canned) RoundTrip(r *http.Request) (*http.Response, error) {
	c.auth = append(c.auth, r.Header.Get("Authorization"))
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(emptyVector)), Request: r}, nil
}

// TestCallSendsCredentialsToOriginOnly shows the call's own check, behind
// the redirect policy: whatever request reaches it, only one to the
// configured origin gets the Authorization header, and the caller's request
// is left as it was.
func TestCallSendsCredentialsToOriginOnly(t *testing.T) {
	t.Parallel()
	next := &canned{}
	target, err := targetURL("http://prometheus.example:9090/prefix")
	if err != nil {
		t.Fatal(err)
	}
	cl := &call{next: next, origin: origin(target), auth: "Bearer t0ken", limit: DefaultMaxBodyBytes}
	urls := []string{
		"http://prometheus.example:9090/api/v1/query",
		"http://PROMETHEUS.Example:9090/elsewhere",
		"http://prometheus.example/api/v1/query",
		"https://prometheus.example:9090/api/v1/query",
		"http://prometheus.example.evil:9090/api/v1/query",
		"http://evil.example:9090/api/v1/query",
	}
	for _, u := range urls {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := cl.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip(%s): %v", u, err)
		}
		_ = resp.Body.Close()
		if h := req.Header.Get("Authorization"); h != "" {
			t.Errorf("RoundTrip(%s) set Authorization on the caller's request", u)
		}
	}
	want := []string{"Bearer t0ken", "Bearer t0ken", "", "", "", ""}
	if diff := cmp.Diff(want, next.auth); diff != "" {
		t.Errorf("Authorization headers: -want, +got:\n%s", diff)
	}
}

// TestOrigin shows which URLs name the same server: the scheme's default
// port is explicit, the host's case does not matter.
func TestOrigin(t *testing.T) {
	cases := map[string]string{
		"http://h":             "http://h:80",
		"http://H:80/p":        "http://h:80",
		"https://h":            "https://h:443",
		"https://h:9090":       "https://h:9090",
		"http://[::1]:9090/x":  "http://[::1]:9090",
		"http://[::1]":         "http://[::1]:80",
		"http://127.0.0.1:443": "http://127.0.0.1:443",
	}
	for in, want := range cases {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := origin(u); got != want {
			t.Errorf("origin(%s) = %s, want %s", in, got, want)
		}
	}
}
