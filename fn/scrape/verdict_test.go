package scrape

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/errors"
)

func TestDecide(t *testing.T) {
	cases := map[string]struct {
		reason string
		o      Observation
		want   Verdict
	}{
		"Empty": {
			reason: "No Running pods means drained, as the original.",
			want:   Verdict{Drained: true},
		},
		"OnlySkipped": {
			reason: "Skipped pods never hold the generation.",
			o:      Observation{Skipped: []string{"e-g1-0"}},
			want:   Verdict{Drained: true},
		},
		"AllZero": {
			reason: "Zero everywhere is drained.",
			o:      Observation{Pods: []PodResult{{Pod: "e-g1-0"}, {Pod: "e-g1-1"}}},
			want:   Verdict{Drained: true},
		},
		"Fractional": {
			reason: "A fractional count is busy; the original's truncation to zero would have called it drained.",
			o:      Observation{Pods: []PodResult{{Pod: "e-g1-0", Running: 0.5}}},
			want:   Verdict{Message: "pod e-g1-0: 0.5 running, 0 suspended queries"},
		},
		"ManyBusy": {
			reason: "Busy pods are listed in order, the first three by name.",
			o: Observation{Pods: []PodResult{
				{Pod: "a", Running: 1}, {Pod: "b", Suspended: 1}, {Pod: "c"}, {Pod: "d", Running: 2}, {Pod: "e", Running: 1},
			}},
			want: Verdict{Message: "pod a: 1 running, 0 suspended queries; pod b: 0 running, 1 suspended queries; pod d: 2 running, 0 suspended queries; and 1 more"},
		},
		"FailureOutranksBusy": {
			reason: "Any failure makes the check failing, and the message is about the failures.",
			o: Observation{Pods: []PodResult{
				{Pod: "a", Running: 1}, {Pod: "b", Err: errors.New("cannot scrape metrics: boom")}, {Pod: "c"},
			}},
			want: Verdict{Failing: true, Message: "pod b: cannot scrape metrics: boom"},
		},
		"FailureWithZeroes": {
			reason: "A failed pod reports zeroes it never read; it still blocks the drain.",
			o:      Observation{Pods: []PodResult{{Pod: "a"}, {Pod: "b", Err: errors.New("x")}}},
			want:   Verdict{Failing: true, Message: "pod b: x"},
		},
		"ListError": {
			reason: "An observation error is failing, whatever else it holds.",
			o:      Observation{Err: errors.New("cannot list pods with selector a=b: forbidden"), Pods: []PodResult{{Pod: "a"}}},
			want:   Verdict{Failing: true, Message: "cannot list pods with selector a=b: forbidden"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.o)); diff != "" {
				t.Errorf("%s\nDecide(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
