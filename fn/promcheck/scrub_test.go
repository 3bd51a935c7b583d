package promcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// echo answers with status, and a body made by body from what the request
// carried: a server quoting its request back in an error, as some proxies
// and authentication layers do.
func echo(status int, body func(r *http.Request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		serve(status, "text/plain", body(r))(w, r)
	}
}

// TestRunScrubsCredentials shows no credential value reaches a message,
// whatever the server echoes and however: the header, the decoded pair, a
// JSON-escaped value, a value broken by a newline, in an API error, in a
// warning, and across the point the message is cut at.
func TestRunScrubsCredentials(t *testing.T) {
	const (
		token = "t0ken-Secret"
		user  = "prom-reader"
		pass  = `pa"ss\word`
	)
	// The token starts 4 bytes before the end of a message at the limit,
	// so the cut would fall inside it.
	const prefix502 = "query failed: server answered 502 Bad Gateway: "
	const pad = MaxMessageBytes - len(prefix502) - 4
	bearer := map[string]string{KeyToken: token}
	basic := map[string]string{KeyUsername: user, KeyPassword: pass}
	cases := map[string]struct {
		secret  map[string]string
		handler http.HandlerFunc
		want    Outcome
	}{
		"BearerHeaderEchoed": {
			secret: bearer,
			handler: echo(http.StatusForbidden, func(r *http.Request) string {
				return "denied: Authorization: " + r.Header.Get("Authorization")
			}),
			want: Outcome{Cause: CauseHTTPStatus, Message: "query failed: server answered 403 Forbidden: denied: Authorization: Bearer [redacted]"},
		},
		"BasicHeaderAndPairEchoed": {
			secret: basic,
			handler: echo(http.StatusUnauthorized, func(r *http.Request) string {
				u, p, _ := r.BasicAuth()
				return r.Header.Get("Authorization") + " is " + u + " with " + p
			}),
			want: Outcome{Cause: CauseHTTPStatus, Message: "query failed: server answered 401 Unauthorized: Basic [redacted] is [redacted] with [redacted]"},
		},
		"JSONEscapedPassword": {
			secret: basic,
			handler: echo(http.StatusBadGateway, func(r *http.Request) string {
				_, p, _ := r.BasicAuth()
				b, _ := json.Marshal(map[string]string{"password": p})
				return string(b)
			}),
			want: Outcome{Cause: CauseHTTPStatus, Message: `query failed: server answered 502 Bad Gateway: {"password":"[redacted]"}`},
		},
		"TokenBrokenByNewline": {
			secret: map[string]string{KeyToken: "two words"},
			handler: echo(http.StatusBadGateway, func(*http.Request) string {
				return "saw two\nwords"
			}),
			want: Outcome{Cause: CauseHTTPStatus, Message: "query failed: server answered 502 Bad Gateway: saw [redacted]"},
		},
		"APIErrorQuotingUser": {
			secret: basic,
			handler: func(w http.ResponseWriter, r *http.Request) {
				u, _, _ := r.BasicAuth()
				serveJSON(http.StatusUnprocessableEntity, fmt.Sprintf(`{"status":"error","errorType":"execution","error":"user %s may not read"}`, u))(w, r)
			},
			want: Outcome{Cause: CauseAPIError, Message: "query failed: server answered 422: execution error: user [redacted] may not read"},
		},
		"WarningQuotingToken": {
			secret: bearer,
			handler: func(w http.ResponseWriter, r *http.Request) {
				serveJSON(http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[]},"warnings":["token `+
					strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+` expires soon"]}`)(w, r)
			},
			want: Outcome{Message: "returned no data; warning: token [redacted] expires soon"},
		},
		"TokenAcrossTheCut": {
			secret: bearer,
			handler: echo(http.StatusBadGateway, func(r *http.Request) string {
				return strings.Repeat("x", pad) + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + strings.Repeat("y", 100)
			}),
			// What is left after the padding is the marker's first byte,
			// then the cut's mark: no byte of the token.
			want: Outcome{Cause: CauseHTTPStatus, Message: prefix502 + strings.Repeat("x", pad) + "[" + ellipsis},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tc.handler)
			creds := mustCredentials(t, tc.secret)
			got := run(t, newClient(), query(srv.URL), creds)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run: -want, +got:\n%s", diff)
			}
			for _, v := range creds.secrets() {
				if strings.Contains(got.Message, v) {
					t.Errorf("message %q holds a credential value", got.Message)
				}
			}
		})
	}
}
