package scrape

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/crossplane/function-sdk-go/errors"
)

func TestDrainPodIP(t *testing.T) {
	noIP := pod("e-g1-1", corev1.PodRunning)
	noIP.Status.PodIP = ""

	type want struct {
		obs     Observation
		verdict Verdict
		// direct counts /metrics requests on the pod IP; proxied counts
		// pods/proxy requests, which PodIP mode must never make.
		direct, proxied int
	}
	cases := map[string]struct {
		reason string
		pods   []corev1.Pod
		direct http.HandlerFunc
		want   want
	}{
		"Drained": {
			reason: "PodIP mode reads http://<podIP>:<port>/metrics directly.",
			pods:   []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
			direct: serveMetrics(textPlain, metricsText("0", "0")),
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0"}}},
				verdict: Verdict{Drained: true},
				direct:  1,
			},
		},
		"Busy": {
			reason: "Busy pods are reported the same way in either mode.",
			pods:   []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
			direct: serveMetrics(textPlain, metricsText("3", "1")),
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0", Running: 3, Suspended: 1}}},
				verdict: Verdict{Message: "pod e-g1-0: 3 running, 1 suspended queries"},
				direct:  1,
			},
		},
		"NoPodIP": {
			reason: "A Running pod without an IP yet cannot be scraped, which is a failure, not drained.",
			pods:   []corev1.Pod{pod("e-g1-0", corev1.PodRunning), noIP},
			direct: serveMetrics(textPlain, metricsText("0", "0")),
			want: want{
				obs: Observation{Pods: []PodResult{
					{Pod: "e-g1-0"},
					{Pod: "e-g1-1", Err: errors.New("cannot scrape metrics: pod has no IP address yet")},
				}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-1: cannot scrape metrics: pod has no IP address yet"},
				direct:  1,
			},
		},
		"RedirectRefused": {
			reason: "PodIP mode refuses redirects as the original did.",
			pods:   []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
			direct: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Location", "/elsewhere")
				w.WriteHeader(http.StatusMovedPermanently)
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0", Err: errors.New("cannot scrape metrics: unexpected HTTP status 301")}}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-0: cannot scrape metrics: unexpected HTTP status 301"},
				direct:  1,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, tc.pods, map[string]http.HandlerFunc{"e-g1-0": serveMetrics(textPlain, metricsText("0", "0"))})
			f.direct = tc.direct
			c := f.client(t, Options{Mode: ModePodIP})
			c.port = serverPort(t, f)

			got := want{obs: c.Observe(context.Background(), testNamespace, testSelector)}
			got.verdict = Decide(got.obs)
			f.mu.Lock()
			for _, r := range f.requests {
				if r == "direct" {
					got.direct++
				} else {
					got.proxied++
				}
			}
			f.mu.Unlock()
			if diff := cmp.Diff(tc.want, got, equateErrorText, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nObserve: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func serverPort(t *testing.T, f *fakeAPI) int {
	t.Helper()
	_, port, err := net.SplitHostPort(f.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
