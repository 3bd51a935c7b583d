package scrape

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestCauseOf drives real checks against the fake API server and reads the
// cause of every error they report: the check's own, then each pod's.
func TestCauseOf(t *testing.T) {
	running := []corev1.Pod{pod("e-g1-0", corev1.PodRunning)}
	noIP := pod("e-g1-0", corev1.PodRunning)
	noIP.Status.PodIP = ""
	one := func(h http.HandlerFunc) func(*fakeAPI) map[string]http.HandlerFunc {
		return func(*fakeAPI) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{"e-g1-0": h} }
	}
	cases := map[string]struct {
		pods  []corev1.Pod
		proxy func(*fakeAPI) map[string]http.HandlerFunc
		list  http.HandlerFunc
		opts  Options
		sel   labels.Selector
		want  []Cause
	}{
		"EmptySelector": {pods: running, proxy: one(serveMetrics(textPlain, metricsText("0", "0"))), sel: labels.Everything(), want: []Cause{CauseConfig}},
		"UnknownMode":   {pods: running, proxy: one(serveMetrics(textPlain, metricsText("0", "0"))), opts: Options{Mode: "Carrier"}, want: []Cause{CauseConfig}},
		"ListFails": {
			list: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) },
			want: []Cause{CauseList},
		},
		"HTTPStatus":   {pods: running, proxy: one(serveStatus(http.StatusServiceUnavailable, textPlain, "down")), want: []Cause{CauseHTTPStatus}},
		"BodyTooLarge": {pods: running, proxy: one(serveMetrics(textPlain, strings.Repeat("#\n", 600))), opts: Options{MaxBodyBytes: 1024}, want: []Cause{CauseBodyTooLarge}},
		"Parse":        {pods: running, proxy: one(serveMetrics(textPlain, "# nothing here\n")), want: []Cause{CauseParse}},
		"PodTimeout": {
			pods: running, proxy: func(f *fakeAPI) map[string]http.HandlerFunc {
				return map[string]http.HandlerFunc{"e-g1-0": f.serveBlock}
			},
			opts: Options{PodTimeout: 50 * time.Millisecond, OverallTimeout: 10 * time.Second},
			want: []Cause{CauseTimeout},
		},
		"Transport": {pods: []corev1.Pod{noIP}, opts: Options{Mode: ModePodIP}, want: []Cause{CauseTransport}},
		"Busy":      {pods: running, proxy: one(serveMetrics(textPlain, metricsText("1", "0"))), want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, tc.pods, nil)
			if tc.proxy != nil {
				f.proxy = tc.proxy(f)
			}
			f.list = tc.list
			opts := testOptions
			if tc.opts != (Options{}) {
				opts = tc.opts
			}
			sel := testSelector
			if tc.sel != nil {
				sel = tc.sel
			}
			obs := f.client(t, opts).Observe(context.Background(), testNamespace, sel)
			var got []Cause
			if obs.Err != nil {
				got = append(got, CauseOf(obs.Err))
			}
			for _, p := range obs.Pods {
				if p.Err != nil {
					got = append(got, CauseOf(p.Err))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("causes: -want, +got:\n%s\nobservation: %+v", diff, obs)
			}
		})
	}
}
