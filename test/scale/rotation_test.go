package scale

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRotationMarkdown(t *testing.T) {
	r := &Rotation{
		Composite: "demo-abcde",
		Steps: []RotationStep{
			{Keys: "signing-1 Active", At: 1500 * time.Millisecond},
			{Keys: "signing-1 Active, signing-2 ValidationOnly", At: 4 * time.Second, Calls: 3},
			{Keys: "signing-1 ValidationOnly, signing-2 Active", At: 30 * time.Second, Calls: 10},
		},
		Done:           RotationStep{Keys: "every engine stable", At: 40 * time.Second, Calls: 12},
		Calls:          12,
		ComposeSeconds: 0.06,
		Advanced:       8,
		Services:       4,
		ServiceBytes:   4 * 2048,
	}
	want := "\nSigning-key rotation of the instance's composite `demo-abcde` (4 engines):\n\n" +
		"| | |\n|---|---:|\n" +
		"| rotation steps seen | 2 |\n" +
		"| function calls for the instance | 12 |\n" +
		"| function calls for the instance per engine | 3.00 |\n" +
		"| function calls for the instance per step | 6.00 |\n" +
		"| the function's time composing the instance | 0.06 s (5.00 ms per call) |\n" +
		"| engine generations advanced | 8 (2.00 per engine) |\n" +
		"| routing Services sent per call | 4 (8.0 KiB as JSON, 2.0 KiB each) |\n" +
		"| routing Services sent in all (calls × Services) | 48 (0.1 MiB as JSON) |\n" +
		"\n| step | keys first seen | at | took | calls for the instance |\n|---|---|---:|---:|---:|\n" +
		"| start | signing-1 Active | 1.5 s | — | — |\n" +
		"| 1 | signing-1 Active, signing-2 ValidationOnly | 4.0 s | 2.5 s | 3 |\n" +
		"| 2 | signing-1 ValidationOnly, signing-2 Active | 30.0 s | 26.0 s | 7 |\n" +
		"| done | every engine stable | 40.0 s | 10.0 s | 2 |\n"
	if diff := cmp.Diff(want, r.Markdown(4)); diff != "" {
		t.Errorf("Markdown(): -want, +got:\n%s", diff)
	}
}

func TestRotationMarkdownTimedOut(t *testing.T) {
	// A rotation that never finished has no done row, and no step yet
	// divides by nothing.
	r := &Rotation{Composite: "demo-abcde", Steps: []RotationStep{{Keys: "signing-1 Active"}}}
	got := r.Markdown(2)
	for _, want := range []string{"| function calls for the instance per step | — |\n", "| start | signing-1 Active |"} {
		if !strings.Contains(got, want) {
			t.Errorf("Markdown(): want %q, got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| done |") {
		t.Errorf("Markdown(): a timed-out rotation has no done row, got:\n%s", got)
	}
}

func TestReportWithRotation(t *testing.T) {
	r := &Report{Engines: 1, Phases: []Phase{{Name: "signing-key rotation", Settles: true, Took: time.Minute}},
		Rotation: &Rotation{Composite: "demo-abcde"}}
	if got := r.Markdown(); !strings.Contains(got, "Signing-key rotation of the instance's composite `demo-abcde`") {
		t.Errorf("Markdown(): want the rotation's tables, got:\n%s", got)
	}
}

func TestHistogramSeries(t *testing.T) {
	in := `# HELP f_seconds Time.
# TYPE f_seconds histogram
f_seconds_bucket{kind="XFireboltEngine",le="+Inf"} 7
f_seconds_sum{kind="XFireboltEngine"} 0.7
f_seconds_count{kind="XFireboltEngine"} 7
f_seconds_bucket{kind="XFireboltInstance",le="0.5"} 2
f_seconds_bucket{kind="XFireboltInstance",le="+Inf"} 3
f_seconds_sum{kind="XFireboltInstance"} 1.25
f_seconds_count{kind="XFireboltInstance"} 3
`
	n, sum, err := HistogramSeries(strings.NewReader(in), "f_seconds", "kind", "XFireboltInstance")
	if err != nil || n != 3 || sum != 1.25 {
		t.Errorf("HistogramSeries(): got %v, %v, %v; want 3, 1.25, nil", n, sum, err)
	}
	if n, sum, err := HistogramSeries(strings.NewReader(in), "f_seconds", "kind", "XOther"); err != nil || n != 0 || sum != 0 {
		t.Errorf("HistogramSeries() of a missing series: got %v, %v, %v; want 0, 0, nil", n, sum, err)
	}
}
