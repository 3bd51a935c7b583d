package promcheck

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// testTime is the evaluation time every test passes; the fake servers check
// it arrives.
var testTime = time.Unix(1700000000, 0)

const (
	testExpr    = "sum(firebolt_running_queries) < 1"
	emptyVector = `{"status":"success","data":{"resultType":"vector","result":[]}}`
)

// vector is a success answer with n series.
func vector(n int) string {
	series := make([]string, n)
	for i := range series {
		series[i] = fmt.Sprintf(`{"metric":{"pod":"p%d"},"value":[1700000000,"0"]}`, i)
	}
	return `{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(series, ",") + `]}}`
}

// serve answers every request with status and body.
func serve(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

func serveJSON(status int, body string) http.HandlerFunc {
	return serve(status, "application/json", body)
}

// serveQuery answers like Prometheus, but only to the request the client
// must send; anything else gets a body that fails the check loudly.
func serveQuery(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/api/v1/query") || r.FormValue("query") != testExpr || r.FormValue("time") != "1700000000" {
			serveJSON(http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"unexpected request"}`)(w, r)
			return
		}
		serveJSON(http.StatusOK, body)(w, r)
	}
}

// block holds a request until the client gives up on it, after closing
// entered (if any) to say it arrived.
func block(entered chan<- struct{}) http.HandlerFunc {
	return func(_ http.ResponseWriter, r *http.Request) {
		hold(r)
		if entered != nil {
			close(entered)
		}
		<-r.Context().Done()
	}
}

// hold reads the request's body, so the server watches the connection and
// ends r's context when the client drops it; a handler that then waits for
// that context ends when the client gives up.
func hold(r *http.Request) {
	_ = r.ParseForm()
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// newClient returns a Client with a Limiter of its own, so parallel tests
// never wait for each other's slots.
func newClient(opts ...Option) *Client {
	return New(append([]Option{WithLimiter(NewLimiter(DefaultMaxConcurrentQueries))}, opts...)...)
}

func query(url string) v1alpha1.PrometheusQuery {
	return v1alpha1.PrometheusQuery{Expr: testExpr, URL: url}
}

// run is Client.Run with the test's context, checked as every Outcome is.
func run(t *testing.T, c *Client, q v1alpha1.PrometheusQuery, creds Credentials) Outcome {
	t.Helper()
	return check(t, c.Run(t.Context(), q, creds, testTime))
}

// check fails the test unless o holds what every Outcome must, whatever the
// test is about, and returns it.
func check(t *testing.T, o Outcome) Outcome {
	t.Helper()
	if o.Cause != "" && !slices.Contains(Causes, o.Cause) {
		t.Errorf("Run: cause %q is not in Causes", o.Cause)
	}
	if o.Succeeded && o.Cause != "" {
		t.Errorf("Run: succeeded with cause %q", o.Cause)
	}
	if len(o.Message) > MaxMessageBytes || !utf8.ValidString(o.Message) {
		t.Errorf("Run: message of %d bytes is not valid UTF-8 of at most %d", len(o.Message), MaxMessageBytes)
	}
	return o
}

// mustCredentials reads data, failing the test on an error.
func mustCredentials(t *testing.T, data map[string]string) Credentials {
	t.Helper()
	c, err := CredentialsFromSecret(secretData(data))
	if err != nil {
		t.Fatalf("CredentialsFromSecret: %v", err)
	}
	return c
}

func secretData(data map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(data))
	for k, v := range data {
		out[k] = []byte(v)
	}
	return out
}
