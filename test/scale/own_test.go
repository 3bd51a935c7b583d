package scale

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	const apply = "application/apply-patch+yaml"
	cases := map[string]struct {
		method, path, query, contentType string
		want                             Key
		wantOK                           bool
	}{
		"ListAllNamespaces":     {method: "GET", path: "/api/v1/pods", want: Key{Resource: "pods", Verb: "LIST"}, wantOK: true},
		"ListInNamespace":       {method: "GET", path: "/api/v1/namespaces/scale/pods", query: "limit=500", want: Key{Resource: "pods", Verb: "LIST"}, wantOK: true},
		"Get":                   {method: "GET", path: "/api/v1/nodes/kwok-node-0", want: Key{Resource: "nodes", Verb: "GET"}, wantOK: true},
		"Watch":                 {method: "GET", path: "/apis/apps/v1/namespaces/scale/statefulsets", query: "resourceVersion=1&watch=true", want: Key{Group: "apps", Resource: "statefulsets", Verb: "WATCH"}, wantOK: true},
		"WatchPathPrefix":       {method: "GET", path: "/api/v1/watch/namespaces/scale/pods", want: Key{Resource: "pods", Verb: "WATCH"}, wantOK: true},
		"ServerSideApply":       {method: "PATCH", path: "/apis/compute.firebolt.io/v1alpha1/namespaces/scale/fireboltengines/scale-0001", query: "fieldManager=e2e-user&force=true", contentType: apply, want: Key{Group: "compute.firebolt.io", Resource: "fireboltengines", Verb: "APPLY"}, wantOK: true},
		"MergePatch":            {method: "PATCH", path: "/apis/compute.firebolt.io/v1alpha1/namespaces/scale/fireboltengines/scale-0001", contentType: "application/merge-patch+json", want: Key{Group: "compute.firebolt.io", Resource: "fireboltengines", Verb: "PATCH"}, wantOK: true},
		"StatusUpdate":          {method: "PUT", path: "/apis/compute.firebolt.io/v1alpha1/namespaces/scale/fireboltengines/scale-0001/status", want: Key{Group: "compute.firebolt.io", Resource: "fireboltengines", Subresource: "status", Verb: "PUT"}, wantOK: true},
		"Create":                {method: "POST", path: "/api/v1/persistentvolumes", want: Key{Resource: "persistentvolumes", Verb: "POST"}, wantOK: true},
		"Delete":                {method: "DELETE", path: "/api/v1/persistentvolumes/pv-1", want: Key{Resource: "persistentvolumes", Verb: "DELETE"}, wantOK: true},
		"DeleteCollection":      {method: "DELETE", path: "/api/v1/namespaces/scale/pods", want: Key{Resource: "pods", Verb: "DELETECOLLECTION"}, wantOK: true},
		"Namespace":             {method: "GET", path: "/api/v1/namespaces/scale", want: Key{Resource: "namespaces", Verb: "GET"}, wantOK: true},
		"NamespaceStatus":       {method: "PUT", path: "/api/v1/namespaces/scale/status", want: Key{Resource: "namespaces", Subresource: "status", Verb: "PUT"}, wantOK: true},
		"NamespacedSubresource": {method: "POST", path: "/api/v1/namespaces/crossplane-system/serviceaccounts/fn/token", want: Key{Resource: "serviceaccounts", Subresource: "token", Verb: "POST"}, wantOK: true},
		"Metrics":               {method: "GET", path: "/metrics"},
		"Readyz":                {method: "GET", path: "/readyz"},
		"GroupDiscovery":        {method: "GET", path: "/apis/compute.firebolt.io/v1alpha1"},
		"CoreDiscovery":         {method: "GET", path: "/api/v1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := Classify(tc.method, tc.path, tc.query, tc.contentType)
			if ok != tc.wantOK {
				t.Fatalf("Classify(%s %s): want ok=%v, got %v (%v)", tc.method, tc.path, tc.wantOK, ok, got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify(%s %s): -want, +got:\n%s", tc.method, tc.path, diff)
			}
		})
	}
}

// The harness's clients go through Own's transport: every request to a
// resource is counted once, requests for no resource not at all.
func TestOwnCountsRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer srv.Close()
	own := NewOwn()
	client := &http.Client{Transport: own.Wrap(http.DefaultTransport)}
	before := own.Snapshot()
	do := func(method, path string) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+path, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		rsp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = rsp.Body.Close()
	}
	do("GET", "/api/v1/pods")
	do("GET", "/api/v1/pods")
	do("GET", "/api/v1/nodes/kwok-node-0")
	do("GET", "/metrics")
	want := Counts{{Resource: "pods", Verb: "LIST"}: 2, {Resource: "nodes", Verb: "GET"}: 1}
	if diff := cmp.Diff(want, own.Snapshot()); diff != "" {
		t.Errorf("Own: -want, +got:\n%s", diff)
	}
	if len(before) != 0 {
		t.Errorf("a snapshot taken before any request must be empty, got %v", before)
	}
}
