package promcheck

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exploding is a RoundTripper that panics, quoting the request's
// credentials as a careless one might.
type exploding struct{}

func (exploding) RoundTrip(r *http.Request) (*http.Response, error) {
	panic("transport exploded holding " + r.Header.Get("Authorization"))
}

// TestRunRecoversPanic shows a panic in a query becomes a failed Outcome,
// scrubbed like any other message, and gives its slot back.
func TestRunRecoversPanic(t *testing.T) {
	t.Parallel()
	srv := newServer(t, serveQuery(vector(1)))
	l := NewLimiter(1)
	c := New(WithLimiter(l))
	healthy := c.verify
	c.verify = exploding{}
	creds := mustCredentials(t, map[string]string{KeyToken: "t0ken"})
	want := Outcome{Cause: CausePanic, Message: "query failed: recovered from a panic: transport exploded holding Bearer [redacted]"}
	if diff := cmp.Diff(want, run(t, c, query(srv.URL), creds)); diff != "" {
		t.Errorf("Run: -want, +got:\n%s", diff)
	}

	c.verify = healthy
	want = Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"}
	if diff := cmp.Diff(want, run(t, c, query(srv.URL), creds)); diff != "" {
		t.Errorf("Run after the panic, with its only slot: -want, +got:\n%s", diff)
	}
}
