package promcheck

import (
	"io"
	"log"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// newTLSServer starts a TLS server answering a check with one series. Its
// log of the handshakes the tests make fail on purpose is discarded.
func newTLSServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(serveQuery(vector(1)))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestRunTLS shows a server whose certificate the system does not trust is
// refused, and reached once the query skips verification or the Client
// trusts its CA.
func TestRunTLS(t *testing.T) {
	unknownAuthority := Outcome{Cause: CauseTLS, Message: "query failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"}
	success := Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"}
	cases := map[string]struct {
		insecure bool
		trust    bool
		want     Outcome
	}{
		"Untrusted":          {want: unknownAuthority},
		"InsecureSkipVerify": {insecure: true, want: success},
		"RootCA":             {trust: true, want: success},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newTLSServer(t)
			var opts []Option
			if tc.trust {
				opts = append(opts, WithRootCAs(srv.Certificate()))
			}
			q := query(srv.URL)
			q.InsecureSkipVerify = tc.insecure
			got := run(t, newClient(opts...), q, Credentials{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestRunVerifiesAfterSkipping shows a connection opened without verifying
// the certificate is never reused by a query that asks for verification.
func TestRunVerifiesAfterSkipping(t *testing.T) {
	t.Parallel()
	srv := newTLSServer(t)
	c := newClient()
	q := query(srv.URL)
	q.InsecureSkipVerify = true
	if got := run(t, c, q, Credentials{}); !got.Succeeded {
		t.Fatalf("Run skipping verification: %+v", got)
	}
	q.InsecureSkipVerify = false
	want := Outcome{Cause: CauseTLS, Message: "query failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"}
	if diff := cmp.Diff(want, run(t, c, q, Credentials{})); diff != "" {
		t.Errorf("Run verifying: -want, +got:\n%s", diff)
	}
}
