package scale

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMarkdown(t *testing.T) {
	r := &Report{
		Engines:         4,
		Processes:       []string{"kube-apiserver", "function"},
		FunctionPeakRSS: 63 << 20,
		TopRequests:     2,
		Phases: []Phase{
			{
				Name: "create 4", Took: 12300 * time.Millisecond, Settles: true,
				Requests: Counts{engineApply: 4, statusPut: 20, podsList: 6},
				Harness:  30, CPU: map[string]float64{"kube-apiserver": 3.14, "function": 0.5},
				BreakerOpens: 1, BreakerLogLines: 3,
			},
			{
				Name: "idle 60 s", Took: time.Minute,
				Steady:   "4 composites; last status change 31s before",
				Requests: Counts{podsList: 2},
				Harness:  300, CPU: map[string]float64{"kube-apiserver": 0.25},
			},
		},
	}
	want := "| 4 engines | create 4 | idle 60 s |\n" +
		"|---|---:|---:|\n" +
		"| time to all `stable` | 12.3 s | — |\n" +
		"| API requests | 30 | 2 |\n" +
		"| API writes | 24 | 0 |\n" +
		"| writes per engine | 6.00 | 0.00 |\n" +
		"| requests per engine per minute | 36.59 | 0.50 |\n" +
		"| CPU-s kube-apiserver | 3.1 | 0.2 |\n" +
		"| CPU-s function | 0.5 | 0.0 |\n" +
		"| circuit breaker opened | 1 | 0 |\n" +
		"| \"Circuit breaker is open\" log lines | 3 | 0 |\n" +
		"| harness's own requests (waits, fake kubelet, provisioner and package runtime; left out above) | 30 | 300 |\n" +
		"\nThe function's peak resident memory (VmHWM, whole run): 63.0 MiB.\n" +
		"\nAPI requests by resource and verb (`apiserver_request_total`, less the harness's own):\n\n" +
		"| resource | verb | create 4 | idle 60 s |\n" +
		"|---|---|---:|---:|\n" +
		"| fireboltengines.compute.firebolt.io/status | PUT | 20 | 0 |\n" +
		"| pods | LIST | 6 | 2 |\n" +
		"| 1 more | | 4 | 0 |\n" +
		"\nidle 60 s, from steady state (4 composites; last status change 31s before): API requests per engine per minute by resource and verb:\n\n" +
		"| resource | verb | per engine per minute |\n" +
		"|---|---|---:|\n" +
		"| pods | LIST | 0.500 |\n" +
		"| all | | 0.500 |\n"
	if diff := cmp.Diff(want, r.Markdown()); diff != "" {
		t.Errorf("Markdown(): -want, +got:\n%s", diff)
	}
}

func TestMarkdownTimedOut(t *testing.T) {
	r := &Report{Engines: 500, Phases: []Phase{{Name: "create 500", Took: 25 * time.Minute, Settles: true, TimedOut: true, Stable: 312}}}
	got := r.Markdown()
	want := "| time to all `stable` | timed out after 1500.0 s (312 of 500 stable) |\n"
	if !strings.Contains(got, want) {
		t.Errorf("Markdown(): want a line %q, got:\n%s", want, got)
	}
}

func TestMarkdownNoEngineTime(t *testing.T) {
	// A phase of zero length has no rate: a dash, not a division by zero.
	r := &Report{Engines: 1, Phases: []Phase{{Name: "idle 0 s"}}}
	got := r.Markdown()
	want := "| requests per engine per minute | — |\n"
	if !strings.Contains(got, want) {
		t.Errorf("Markdown(): want a line %q, got:\n%s", want, got)
	}
}
