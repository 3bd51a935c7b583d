package scrape

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/crossplane/function-sdk-go/errors"
)

// panicOn is a RoundTripper that panics for one host and passes the rest on.
type panicOn struct {
	host string
	next http.RoundTripper
}

func (p panicOn) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Hostname() == p.host {
		panic("transport exploded")
	}
	return p.next.RoundTrip(r)
}

// TestDrainRecoversPanic shows that a panic in a scrape goroutine, here in
// an injected transport, becomes that pod's scrape error: the check fails
// closed, the other pod is still read, and the process lives on.
func TestDrainRecoversPanic(t *testing.T) {
	bad := pod("e-g1-1", corev1.PodRunning)
	bad.Status.PodIP = "127.0.0.2"
	f := newFakeAPI(t, []corev1.Pod{pod("e-g1-0", corev1.PodRunning), bad}, nil)
	f.direct = serveMetrics(textPlain, metricsText("0", "0"))
	kube, err := corev1client.NewForConfig(&rest.Config{Host: f.srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := New(kube, &http.Client{Transport: panicOn{host: "127.0.0.2", next: http.DefaultTransport}}, Options{Mode: ModePodIP})
	c.port = serverPort(t, f)

	type want struct {
		obs     Observation
		verdict Verdict
	}
	got := want{obs: c.Observe(context.Background(), testNamespace, testSelector)}
	got.verdict = Decide(got.obs)
	wantErr := "cannot scrape metrics: recovered from a panic: transport exploded"
	if diff := cmp.Diff(want{
		obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0"}, {Pod: "e-g1-1", Err: errors.New(wantErr)}}},
		verdict: Verdict{Failing: true, Message: "pod e-g1-1: " + wantErr},
	}, got, equateErrorText, cmp.AllowUnexported(want{})); diff != "" {
		t.Errorf("Observe: -want, +got:\n%s", diff)
	}
}
