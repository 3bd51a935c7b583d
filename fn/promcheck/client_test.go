package promcheck

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRunAnswers runs a check against servers that answer, well or badly,
// and compares the whole Outcome: what counts as data, and how each kind of
// bad answer is named.
func TestRunAnswers(t *testing.T) {
	cases := map[string]struct {
		handler http.HandlerFunc
		want    Outcome
	}{
		"VectorWithSeries": {
			handler: serveQuery(vector(2)),
			want:    Outcome{Succeeded: true, Series: 2, Message: "returned 2 series"},
		},
		"EmptyVectorIsNoData": {
			handler: serveQuery(emptyVector),
			want:    Outcome{Message: "returned no data"},
		},
		"MatrixCountsSeriesWithSamples": {
			handler: serveQuery(`{"status":"success","data":{"resultType":"matrix","result":[` +
				`{"metric":{"pod":"a"},"values":[[1700000000,"1"],[1700000015,"2"]]},{"metric":{"pod":"b"},"values":[]}]}}`),
			want: Outcome{Succeeded: true, Series: 1, Message: "returned 1 series"},
		},
		"MatrixWithoutSamplesIsNoData": {
			handler: serveQuery(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"pod":"b"},"values":[]}]}}`),
			want:    Outcome{Message: "returned no data"},
		},
		"ScalarIsData": {
			handler: serveQuery(`{"status":"success","data":{"resultType":"scalar","result":[1700000000,"0"]}}`),
			want:    Outcome{Succeeded: true, Message: "returned scalar 0"},
		},
		// client_golang v1.23 decodes no string result: a string literal
		// as a check fails, closed. judge would count one as data.
		"StringCannotBeDecoded": {
			handler: serveQuery(`{"status":"success","data":{"resultType":"string","result":[1700000000,"hi"]}}`),
			want:    Outcome{Cause: CauseParse, Message: `query failed: cannot decode the response: unexpected value type "string"`},
		},
		"WarningsAreAppended": {
			handler: serveQuery(`{"status":"success","data":{"resultType":"vector","result":[]},` +
				`"warnings":["PromQL info: metric might not be a counter","second"]}`),
			want: Outcome{Message: "returned no data; warning: PromQL info: metric might not be a counter (and 1 more)"},
		},
		"APIErrorWith500": {
			handler: serveJSON(http.StatusInternalServerError, `{"status":"error","errorType":"internal","error":"storage is down"}`),
			want:    Outcome{Cause: CauseAPIError, Message: "query failed: server answered 500: internal error: storage is down"},
		},
		"APIErrorWith503IsPrometheusTimingOut": {
			handler: serveJSON(http.StatusServiceUnavailable, `{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`),
			want:    Outcome{Cause: CauseAPIError, Message: "query failed: server answered 503: timeout error: query timed out in expression evaluation"},
		},
		"APIErrorWith422": {
			handler: serveJSON(http.StatusUnprocessableEntity, `{"status":"error","errorType":"execution","error":"many-to-many matching not allowed"}`),
			want:    Outcome{Cause: CauseAPIError, Message: "query failed: server answered 422: execution error: many-to-many matching not allowed"},
		},
		"APIErrorWith400": {
			handler: serveJSON(http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected end of input"}`),
			want:    Outcome{Cause: CauseAPIError, Message: "query failed: server answered 400: bad_data error: 1:5: parse error: unexpected end of input"},
		},
		"APIErrorWith200": {
			handler: serveJSON(http.StatusOK, `{"status":"error","errorType":"execution","error":"boom"}`),
			want:    Outcome{Cause: CauseAPIError, Message: "query failed: server answered 200: execution error: boom"},
		},
		"PlainText503": {
			handler: serve(http.StatusServiceUnavailable, "text/plain", "down for maintenance\n"),
			want:    Outcome{Cause: CauseHTTPStatus, Message: "query failed: server answered 503 Service Unavailable: down for maintenance"},
		},
		"Unauthorized": {
			handler: serve(http.StatusUnauthorized, "text/plain", ""),
			want:    Outcome{Cause: CauseHTTPStatus, Message: "query failed: server answered 401 Unauthorized"},
		},
		"PlainText400IsNotAnAPIError": {
			handler: serve(http.StatusBadRequest, "text/plain", "bad request"),
			want:    Outcome{Cause: CauseHTTPStatus, Message: "query failed: server answered 400 Bad Request"},
		},
		"BadJSON": {
			handler: serveJSON(http.StatusOK, `{"status":"success","data":`),
			want:    Outcome{Cause: CauseParse, Message: "query failed: cannot decode the response: v1.apiResponse.Data: Skip: do not know how to skip: 0"},
		},
		"HTMLLoginPage": {
			handler: serve(http.StatusOK, "text/html", "<html>log in</html>"),
			want:    Outcome{Cause: CauseParse, Message: "query failed: cannot decode the response: readObjectStart: expect { or n, but found <"},
		},
		"UnknownResultType": {
			handler: serveJSON(http.StatusOK, `{"status":"success","data":{"resultType":"table","result":[]}}`),
			want:    Outcome{Cause: CauseParse, Message: `query failed: cannot decode the response: Result: Type: unknown value type "table"`},
		},
		"NoContent": {
			handler: serve(http.StatusNoContent, "application/json", ""),
			want:    Outcome{Cause: CauseParse, Message: "query failed: cannot decode the response: Skip: do not know how to skip: 0"},
		},
		"ConnectionDropped": {
			handler: func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					_ = conn.Close()
				}
			},
			want: Outcome{Cause: CauseTransport, Message: "query failed: EOF"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tc.handler)
			got := run(t, newClient(), query(srv.URL), Credentials{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestRunSendsQuery shows what reaches the server: the expression, the
// evaluation time passed in, Prometheus's own timeout in a form it parses,
// and the path under the URL's prefix.
func TestRunSendsQuery(t *testing.T) {
	t.Parallel()
	type request struct {
		Method, Path, Query, Time, Timeout string
	}
	var mu sync.Mutex
	var got []request
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, request{r.Method, r.URL.Path, r.FormValue("query"), r.FormValue("time"), r.FormValue("timeout")})
		mu.Unlock()
		serveJSON(http.StatusOK, vector(1))(w, r)
	}))
	c := newClient(WithTimeout(1500 * time.Millisecond))
	o := check(t, c.Run(t.Context(), query(srv.URL+"/prometheus/"), Credentials{}, time.Unix(1700000000, 250e6)))
	if !o.Succeeded {
		t.Fatalf("Run: %+v", o)
	}
	want := []request{{Method: http.MethodPost, Path: "/prometheus/api/v1/query", Query: testExpr, Time: "1700000000.25", Timeout: "2s"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests: -want, +got:\n%s", diff)
	}
}

// TestRunBodyLimit shows a body one byte over the limit fails as too large,
// whether its length was announced or streamed, and one at the limit is
// read: the limit is exact, not a truncation.
func TestRunBodyLimit(t *testing.T) {
	body := vector(3)
	limit := int64(len(body))
	streamed := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for i := range body {
				_, _ = w.Write([]byte{body[i]})
				if i%256 == 0 {
					_ = http.NewResponseController(w).Flush()
				}
			}
		}
	}
	tooLarge := Outcome{Cause: CauseBodyTooLarge, Message: "query failed: the response body exceeds the limit of " + strconv.FormatInt(limit, 10) + " bytes"}
	cases := map[string]struct {
		handler http.HandlerFunc
		want    Outcome
	}{
		"AtLimitAnnounced":   {handler: serveJSON(http.StatusOK, body), want: Outcome{Succeeded: true, Series: 3, Message: "returned 3 series"}},
		"AtLimitStreamed":    {handler: streamed(body), want: Outcome{Succeeded: true, Series: 3, Message: "returned 3 series"}},
		"OverLimitAnnounced": {handler: serveJSON(http.StatusOK, body+" "), want: tooLarge},
		"OverLimitStreamed":  {handler: streamed(body + " "), want: tooLarge},
		"ErrorBodyOverLimit": {handler: serve(http.StatusInternalServerError, "text/plain", strings.Repeat("x", int(limit)+1)), want: tooLarge},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tc.handler)
			got := run(t, newClient(WithMaxBodyBytes(limit)), query(srv.URL), Credentials{})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Run: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestRunBoundsMessage shows a long, multi-line error body ends up as one
// printable line of at most MaxMessageBytes.
func TestRunBoundsMessage(t *testing.T) {
	t.Parallel()
	body := "first line\r\nsecond\tline\x00\x1b[31m " + strings.Repeat("é", 400)
	srv := newServer(t, serve(http.StatusBadGateway, "text/plain", body))
	got := run(t, newClient(), query(srv.URL), Credentials{})
	prefix := "query failed: server answered 502 Bad Gateway: first line second line [31m "
	want := prefix + strings.Repeat("é", (MaxMessageBytes-len(prefix)-len(ellipsis))/2) + ellipsis
	if diff := cmp.Diff(Outcome{Cause: CauseHTTPStatus, Message: want}, got); diff != "" {
		t.Errorf("Run: -want, +got:\n%s", diff)
	}
}
