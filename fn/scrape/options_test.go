package scrape

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOptionsWithDefaults(t *testing.T) {
	cases := map[string]struct {
		reason string
		o      Options
		want   Options
	}{
		"Zero": {
			reason: "Zero options take every default, the API-server proxy first among them.",
			want: Options{Mode: ModeApiserverProxy, PodTimeout: DefaultPodTimeout, OverallTimeout: DefaultOverallTimeout,
				MaxBodyBytes: DefaultMaxBodyBytes, Concurrency: DefaultConcurrency, MaxConcurrentScrapes: DefaultMaxConcurrentScrapes},
		},
		"Negative": {
			reason: "Negative bounds are not bounds; they take the defaults too.",
			o:      Options{PodTimeout: -1, OverallTimeout: -1, MaxBodyBytes: -1, Concurrency: -1, MaxConcurrentScrapes: -1},
			want: Options{Mode: ModeApiserverProxy, PodTimeout: DefaultPodTimeout, OverallTimeout: DefaultOverallTimeout,
				MaxBodyBytes: DefaultMaxBodyBytes, Concurrency: DefaultConcurrency, MaxConcurrentScrapes: DefaultMaxConcurrentScrapes},
		},
		"Set": {
			reason: "Set options are kept, an unknown mode included (it fails closed at check time).",
			o:      Options{Mode: "Other", PodTimeout: time.Second, OverallTimeout: 2 * time.Second, MaxBodyBytes: 10, Concurrency: 1, MaxConcurrentScrapes: 2},
			want:   Options{Mode: "Other", PodTimeout: time.Second, OverallTimeout: 2 * time.Second, MaxBodyBytes: 10, Concurrency: 1, MaxConcurrentScrapes: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.o.withDefaults()); diff != "" {
				t.Errorf("%s\nwithDefaults(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
