package scrape

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/crossplane/function-sdk-go/errors"
)

// equateErrorText compares errors by their text: the messages are what the
// composer surfaces in conditions, so they are what must not change.
var equateErrorText = cmp.Comparer(func(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
})

// Options for most cases: generous timeouts, so only the cases about time
// can time out.
var testOptions = Options{PodTimeout: 10 * time.Second, OverallTimeout: 30 * time.Second}

const selectorText = "firebolt.io/engine=e,firebolt.io/generation=1"

func TestDrainApiserverProxy(t *testing.T) {
	type args struct {
		pods  []corev1.Pod
		proxy func(f *fakeAPI) map[string]http.HandlerFunc
		list  func(f *fakeAPI) http.HandlerFunc
		opts  Options
		sel   labels.Selector
		ctx   func() context.Context
	}
	type want struct {
		obs     Observation
		verdict Verdict
		// scraped are the pods whose metrics were requested, sorted.
		scraped []string
	}
	drained := serveMetrics(textPlain, metricsText("0", "0"))
	terminating := pod("e-g1-1", corev1.PodRunning)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Unix(1700000000, 0)}
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	statusBody, err := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "error trying to reach service: dial tcp 10.0.0.7:9090: connect: connection refused",
		Code:     http.StatusServiceUnavailable,
	})
	if err != nil {
		t.Fatal(err)
	}
	manyPods := make([]corev1.Pod, 5)
	for i := range manyPods {
		manyPods[i] = pod(fmt.Sprintf("e-g1-%d", i), corev1.PodRunning)
	}

	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Drained": {
			reason: "Every Running pod at zero means drained.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-1", corev1.PodRunning), pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": drained, "e-g1-1": drained}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0"}, {Pod: "e-g1-1"}}},
				verdict: Verdict{Drained: true},
				scraped: []string{"e-g1-0", "e-g1-1"},
			},
		},
		"Busy": {
			reason: "One running query on one pod holds the generation; that is waiting, not failing.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning), pod("e-g1-1", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": drained, "e-g1-1": serveMetrics(textPlain, metricsText("1", "0"))}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0"}, {Pod: "e-g1-1", Running: 1}}},
				verdict: Verdict{Message: "pod e-g1-1: 1 running, 0 suspended queries"},
				scraped: []string{"e-g1-0", "e-g1-1"},
			},
		},
		"SuspendedOnly": {
			reason: "A suspended query alone also holds the generation.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveMetrics(textPlain, metricsText("0", "2"))}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0", Suspended: 2}}},
				verdict: Verdict{Message: "pod e-g1-0: 0 running, 2 suspended queries"},
				scraped: []string{"e-g1-0"},
			},
		},
		"LabelledSamplesSummed": {
			reason: "Labelled samples of a family are summed.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveMetrics(textPlain,
						"firebolt_running_queries{pool=\"a\"} 2\nfirebolt_running_queries{pool=\"b\"} 3\nfirebolt_suspended_queries{pool=\"a\"} 1\n")}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0", Running: 5, Suspended: 1}}},
				verdict: Verdict{Message: "pod e-g1-0: 5 running, 1 suspended queries"},
				scraped: []string{"e-g1-0"},
			},
		},
		"Protobuf": {
			reason: "The response's Content-Type is honoured.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveMetrics(protoContentType, protoBody(t, metricsText("0", "0")))}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0"}}},
				verdict: Verdict{Drained: true},
				scraped: []string{"e-g1-0"},
			},
		},
		"MissingMetric": {
			reason: "A missing gauge is a failure naming the pod and the metric.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveMetrics(textPlain, "firebolt_suspended_queries 0\n")}
				},
			},
			want: want{
				obs: Observation{Pods: []PodResult{{Pod: "e-g1-0", Err: errors.New("cannot parse metrics: metric firebolt_running_queries missing")}}},
				verdict: Verdict{Failing: true,
					Message: "pod e-g1-0: cannot parse metrics: metric firebolt_running_queries missing"},
				scraped: []string{"e-g1-0"},
			},
		},
		"NonRunningSkipped": {
			reason: "Pods not in phase Running are neither scraped nor waited for, as the original.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-2", corev1.PodPending), pod("e-g1-0", corev1.PodRunning), pod("e-g1-1", corev1.PodSucceeded), pod("e-g1-3", corev1.PodFailed)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					busy := serveMetrics(textPlain, metricsText("9", "9"))
					return map[string]http.HandlerFunc{"e-g1-0": drained, "e-g1-1": busy, "e-g1-2": busy, "e-g1-3": busy}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0"}}, Skipped: []string{"e-g1-1", "e-g1-2", "e-g1-3"}},
				verdict: Verdict{Drained: true},
				scraped: []string{"e-g1-0"},
			},
		},
		"OnlyPendingPods": {
			reason: "A generation whose pods never started serves nothing, so it is drained, as the original.",
			args: args{
				pods:  []corev1.Pod{pod("e-g1-0", corev1.PodPending)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc { return nil },
			},
			want: want{
				obs:     Observation{Skipped: []string{"e-g1-0"}},
				verdict: Verdict{Drained: true},
			},
		},
		"NoPods": {
			reason: "A generation without pods is drained, as the original.",
			args:   args{proxy: func(*fakeAPI) map[string]http.HandlerFunc { return nil }},
			want:   want{verdict: Verdict{Drained: true}},
		},
		"TerminatingPodScraped": {
			reason: "A terminating pod is still Running and may still be finishing queries, so it is scraped.",
			args: args{
				pods: []corev1.Pod{terminating},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-1": serveMetrics(textPlain, metricsText("1", "0"))}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-1", Running: 1}}},
				verdict: Verdict{Message: "pod e-g1-1: 1 running, 0 suspended queries"},
				scraped: []string{"e-g1-1"},
			},
		},
		"ServerError": {
			reason: "A non-200 is a failure quoting the status and the start of the body.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveStatus(http.StatusInternalServerError, "text/plain", "engine exploded\n"+strings.Repeat("x", 1000))}
				},
			},
			want: want{
				obs: Observation{Pods: []PodResult{{Pod: "e-g1-0", Err: errors.New(`cannot scrape metrics: unexpected HTTP status 500: "engine exploded\n` + strings.Repeat("x", 184) + `…"`)}}},
				verdict: Verdict{Failing: true,
					Message: `pod e-g1-0: cannot scrape metrics: unexpected HTTP status 500: "engine exploded\n` + strings.Repeat("x", 184) + `…"`},
				scraped: []string{"e-g1-0"},
			},
		},
		"ProxyUnreachable": {
			reason: "The API server's Status for an unreachable pod is reduced to its message.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveStatus(http.StatusServiceUnavailable, "application/json", string(statusBody))}
				},
			},
			want: want{
				obs: Observation{Pods: []PodResult{{Pod: "e-g1-0", Err: errors.New(`cannot scrape metrics: unexpected HTTP status 503: "error trying to reach service: dial tcp 10.0.0.7:9090: connect: connection refused"`)}}},
				verdict: Verdict{Failing: true,
					Message: `pod e-g1-0: cannot scrape metrics: unexpected HTTP status 503: "error trying to reach service: dial tcp 10.0.0.7:9090: connect: connection refused"`},
				scraped: []string{"e-g1-0"},
			},
		},
		"EmptyErrorBody": {
			reason: "A non-200 without a body still names the status.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveStatus(http.StatusBadGateway, "text/plain", "")}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0", Err: errors.New("cannot scrape metrics: unexpected HTTP status 502")}}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-0: cannot scrape metrics: unexpected HTTP status 502"},
				scraped: []string{"e-g1-0"},
			},
		},
		"RedirectRefused": {
			reason: "A redirect is not followed, even to a drained answer: it could carry the function's credentials elsewhere.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning), pod("e-g1-1", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{
						"e-g1-0": func(w http.ResponseWriter, r *http.Request) {
							http.Redirect(w, r, "/api/v1/namespaces/ns/pods/e-g1-1:9090/proxy/metrics", http.StatusFound)
						},
						"e-g1-1": drained,
					}
				},
			},
			want: want{
				obs: Observation{Pods: []PodResult{
					{Pod: "e-g1-0", Err: errors.New(`cannot scrape metrics: unexpected HTTP status 302: "<a href=\"/api/v1/namespaces/ns/pods/e-g1-1:9090/proxy/metrics\">Found</a>."`)},
					{Pod: "e-g1-1"},
				}},
				verdict: Verdict{Failing: true,
					Message: `pod e-g1-0: cannot scrape metrics: unexpected HTTP status 302: "<a href=\"/api/v1/namespaces/ns/pods/e-g1-1:9090/proxy/metrics\">Found</a>."`},
				scraped: []string{"e-g1-0", "e-g1-1"},
			},
		},
		"PodTimeout": {
			reason: "A pod that never answers fails with the per-pod timeout; the others are still decided.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning), pod("e-g1-1", corev1.PodRunning)},
				proxy: func(f *fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": f.serveBlock, "e-g1-1": drained}
				},
				opts: Options{PodTimeout: 50 * time.Millisecond, OverallTimeout: 30 * time.Second},
			},
			want: want{
				obs: Observation{Pods: []PodResult{
					{Pod: "e-g1-0", Err: errors.New("cannot scrape metrics: per-pod timeout of 50ms exceeded")},
					{Pod: "e-g1-1"},
				}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-0: cannot scrape metrics: per-pod timeout of 50ms exceeded"},
				scraped: []string{"e-g1-0", "e-g1-1"},
			},
		},
		"SlowBody": {
			reason: "A body that trickles past the per-pod timeout fails, it is never parsed half-read.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(f *fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": f.serveSlow}
				},
				opts: Options{PodTimeout: 50 * time.Millisecond, OverallTimeout: 30 * time.Second},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0", Err: errors.New("cannot scrape metrics: per-pod timeout of 50ms exceeded")}}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-0: cannot scrape metrics: per-pod timeout of 50ms exceeded"},
				scraped: []string{"e-g1-0"},
			},
		},
		"OverallTimeout": {
			reason: "When the whole check runs out of time, pods in flight and pods not yet started fail with the overall timeout.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning), pod("e-g1-1", corev1.PodRunning), pod("e-g1-2", corev1.PodRunning)},
				proxy: func(f *fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": f.serveBlock, "e-g1-1": f.serveBlock, "e-g1-2": f.serveBlock}
				},
				opts: Options{PodTimeout: 30 * time.Second, OverallTimeout: 100 * time.Millisecond, Concurrency: 2},
			},
			want: want{
				obs: Observation{Pods: []PodResult{
					{Pod: "e-g1-0", Err: errors.New("cannot scrape metrics: drain check exceeded its overall timeout of 100ms")},
					{Pod: "e-g1-1", Err: errors.New("cannot scrape metrics: drain check exceeded its overall timeout of 100ms")},
					{Pod: "e-g1-2", Err: errors.New("cannot scrape metrics: drain check exceeded its overall timeout of 100ms")},
				}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-0: cannot scrape metrics: drain check exceeded its overall timeout of 100ms; " +
					"pod e-g1-1: cannot scrape metrics: drain check exceeded its overall timeout of 100ms; " +
					"pod e-g1-2: cannot scrape metrics: drain check exceeded its overall timeout of 100ms"},
				scraped: []string{"e-g1-0", "e-g1-1"},
			},
		},
		"OversizedBody": {
			reason: "A body one byte over the limit fails rather than being parsed truncated.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveMetrics(textPlain, padTo(metricsText("0", "0"), 513))}
				},
				opts: Options{MaxBodyBytes: 512},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0", Err: errors.New("cannot scrape metrics: metrics body exceeds the limit of 512 bytes")}}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-0: cannot scrape metrics: metrics body exceeds the limit of 512 bytes"},
				scraped: []string{"e-g1-0"},
			},
		},
		"BodyAtLimit": {
			reason: "A body exactly at the limit is read and parsed.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveMetrics(textPlain, padTo(metricsText("0", "0"), 512))}
				},
				opts: Options{MaxBodyBytes: 512},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0"}}},
				verdict: Verdict{Drained: true},
				scraped: []string{"e-g1-0"},
			},
		},
		"GarbageBody": {
			reason: "A body that is not an exposition fails: it names neither gauge.",
			args: args{
				pods: []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					return map[string]http.HandlerFunc{"e-g1-0": serveMetrics("text/html", "<html>oops</html>")}
				},
			},
			want: want{
				obs:     Observation{Pods: []PodResult{{Pod: "e-g1-0", Err: errors.New("cannot parse metrics: metric firebolt_running_queries missing")}}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-0: cannot parse metrics: metric firebolt_running_queries missing"},
				scraped: []string{"e-g1-0"},
			},
		},
		"ManyFailuresBounded": {
			reason: "A message about many failing pods names the first three and counts the rest.",
			args: args{
				pods: manyPods,
				proxy: func(*fakeAPI) map[string]http.HandlerFunc {
					m := map[string]http.HandlerFunc{}
					for _, p := range manyPods {
						m[p.Name] = serveStatus(http.StatusInternalServerError, "text/plain", "")
					}
					return m
				},
			},
			want: want{
				obs: Observation{Pods: []PodResult{
					{Pod: "e-g1-0", Err: errors.New("cannot scrape metrics: unexpected HTTP status 500")},
					{Pod: "e-g1-1", Err: errors.New("cannot scrape metrics: unexpected HTTP status 500")},
					{Pod: "e-g1-2", Err: errors.New("cannot scrape metrics: unexpected HTTP status 500")},
					{Pod: "e-g1-3", Err: errors.New("cannot scrape metrics: unexpected HTTP status 500")},
					{Pod: "e-g1-4", Err: errors.New("cannot scrape metrics: unexpected HTTP status 500")},
				}},
				verdict: Verdict{Failing: true, Message: "pod e-g1-0: cannot scrape metrics: unexpected HTTP status 500; " +
					"pod e-g1-1: cannot scrape metrics: unexpected HTTP status 500; " +
					"pod e-g1-2: cannot scrape metrics: unexpected HTTP status 500; and 2 more"},
				scraped: []string{"e-g1-0", "e-g1-1", "e-g1-2", "e-g1-3", "e-g1-4"},
			},
		},
		"ListFails": {
			reason: "A list error is a failure; nothing is scraped.",
			args: args{
				pods:  []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{"e-g1-0": drained} },
				list: func(*fakeAPI) http.HandlerFunc {
					return serveStatus(http.StatusInternalServerError, "text/plain", "etcd is down")
				},
			},
			want: want{
				obs: Observation{Err: errors.New(`cannot list pods with selector ` + selectorText + `: an error on the server ("etcd is down") has prevented the request from succeeding (get pods)`)},
				verdict: Verdict{Failing: true,
					Message: `cannot list pods with selector ` + selectorText + `: an error on the server ("etcd is down") has prevented the request from succeeding (get pods)`},
			},
		},
		"ListTimesOut": {
			reason: "A list that never answers ends with the overall timeout.",
			args: args{
				proxy: func(*fakeAPI) map[string]http.HandlerFunc { return nil },
				list:  func(f *fakeAPI) http.HandlerFunc { return f.serveBlock },
				opts:  Options{OverallTimeout: 100 * time.Millisecond},
			},
			want: want{
				obs:     Observation{Err: errors.New("cannot list pods with selector " + selectorText + ": drain check exceeded its overall timeout of 100ms")},
				verdict: Verdict{Failing: true, Message: "cannot list pods with selector " + selectorText + ": drain check exceeded its overall timeout of 100ms"},
			},
		},
		"CallerCancelled": {
			reason: "A cancelled caller context fails the check, it does not pass it.",
			args: args{
				pods:  []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{"e-g1-0": drained} },
				ctx:   cancelled,
			},
			want: want{
				obs:     Observation{Err: errors.New("cannot list pods with selector " + selectorText + ": context canceled")},
				verdict: Verdict{Failing: true, Message: "cannot list pods with selector " + selectorText + ": context canceled"},
			},
		},
		"EmptySelector": {
			reason: "An empty selector would scrape the whole namespace; it is refused.",
			args: args{
				pods:  []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{"e-g1-0": drained} },
				sel:   labels.Everything(),
			},
			want: want{
				obs:     Observation{Err: errors.New("cannot check drain: empty pod label selector")},
				verdict: Verdict{Failing: true, Message: "cannot check drain: empty pod label selector"},
			},
		},
		"UnknownMode": {
			reason: "An unknown mode fails closed, as the original.",
			args: args{
				pods:  []corev1.Pod{pod("e-g1-0", corev1.PodRunning)},
				proxy: func(*fakeAPI) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{"e-g1-0": drained} },
				opts:  Options{Mode: "Carrier"},
			},
			want: want{
				obs:     Observation{Err: errors.New(`cannot check drain: unknown metric scrape mode "Carrier", want "ApiserverProxy" or "PodIP"`)},
				verdict: Verdict{Failing: true, Message: `cannot check drain: unknown metric scrape mode "Carrier", want "ApiserverProxy" or "PodIP"`},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t, tc.args.pods, nil)
			f.proxy = tc.args.proxy(f)
			if tc.args.list != nil {
				f.list = tc.args.list(f)
			}
			opts := testOptions
			if tc.args.opts != (Options{}) {
				opts = tc.args.opts
			}
			sel := testSelector
			if tc.args.sel != nil {
				sel = tc.args.sel
			}
			ctx := context.Background()
			if tc.args.ctx != nil {
				ctx = tc.args.ctx()
			}
			c := f.client(t, opts)

			obs := c.Observe(ctx, testNamespace, sel)
			got := want{obs: obs, verdict: c.Drain(ctx, testNamespace, sel), scraped: f.scrapedOnce()}
			if diff := cmp.Diff(tc.want, got, equateErrorText, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nObserve, Drain: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// padTo pads a text exposition with a comment line to exactly n bytes.
func padTo(body string, n int) string {
	pad := n - len(body) - len("#\n")
	return body + "#" + strings.Repeat("x", pad) + "\n"
}

// scrapedOnce returns the sorted, distinct pods whose metrics were requested
// through the proxy (each test case checks twice).
func (f *fakeAPI) scrapedOnce() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, r := range f.requests {
		name, ok := strings.CutPrefix(r, "proxy ")
		if !ok || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
