package wakeagent

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// patch is a request the fake API server received.
type patch struct {
	Method      string
	Path        string
	ContentType string
	Body        string
}

// fakeAPI is an API server that takes FireboltEngine patches, records
// them, and answers with the claim, or with fail's status when set.
type fakeAPI struct {
	srv *httptest.Server

	mu      sync.Mutex
	patches []patch
	fail    int
}

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	a := &fakeAPI{}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// slicesPath lists and watches testNamespace's EndpointSlices.
const slicesPath = "/apis/discovery.k8s.io/v1/namespaces/gw/endpointslices"

func (a *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == slicesPath {
		serveNoSlices(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	a.mu.Lock()
	a.patches = append(a.patches, patch{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: string(body)})
	fail := a.fail
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if fail != 0 {
		w.WriteHeader(fail)
		_, _ = fmt.Fprintf(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","code":%d,"reason":"Forbidden","message":"forbidden"}`, fail)
		return
	}
	// The name is a validated engine name: nothing in it needs quoting.
	name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	_, _ = fmt.Fprintf(w, `{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"FireboltEngine","metadata":{"name":%q,"namespace":%q}}`, name, testNamespace)
}

func (a *fakeAPI) failWith(code int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fail = code
}

func (a *fakeAPI) received() []patch {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]patch(nil), a.patches...)
}

// stamper is a ClaimStamper for testNamespace through the fake server.
func (a *fakeAPI) stamper(t *testing.T) ClaimStamper {
	t.Helper()
	c, err := dynamic.NewForConfig(&rest.Config{Host: a.srv.URL, BearerToken: "secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	return ClaimStamper{Client: c, Namespace: testNamespace}
}

// serveNoSlices answers a list of EndpointSlices with none, and a watch of
// them with, when the client streams the initial list, the bookmark that
// ends the (empty) list, then nothing until the client goes.
func serveNoSlices(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	q := r.URL.Query()
	if q.Get("watch") != "true" {
		_, _ = io.WriteString(w, `{"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1","metadata":{"resourceVersion":"1"},"items":[]}`)
		return
	}
	if q.Get("sendInitialEvents") == "true" {
		_, _ = io.WriteString(w, `{"type":"BOOKMARK","object":{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1",`+
			`"metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}},"addressType":"IPv4","endpoints":null}}`+"\n")
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	<-r.Context().Done()
}
