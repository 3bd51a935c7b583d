package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// TestDrainCheckIntervalMinimum shows that an interval below 1s, which
// admission refuses but an older stored object may still hold, is raised
// to 1s wherever it comes from, and that the draining phase polls at the
// raised interval.
func TestDrainCheckIntervalMinimum(t *testing.T) {
	ms := func(n int) *metav1.Duration { return &metav1.Duration{Duration: time.Duration(n) * time.Millisecond} }
	cases := map[string]struct {
		reason string
		engine *metav1.Duration
		class  *metav1.Duration
		want   time.Duration
	}{
		"EngineBelowMinimum": {
			reason: "The engine's 10ms is raised to 1s.",
			engine: ms(10),
			want:   time.Second,
		},
		"ClassBelowMinimum": {
			reason: "The class's 500ms is raised to 1s.",
			class:  ms(500),
			want:   time.Second,
		},
		"EngineAtMinimumOverClass": {
			reason: "The engine's 1s wins over the class and is kept.",
			engine: ms(1000),
			class:  ms(30000),
			want:   time.Second,
		},
		"AboveMinimumKept": {
			reason: "Intervals above the minimum are kept.",
			engine: ms(1500),
			want:   1500 * time.Millisecond,
		},
		"Default": {
			reason: "Neither set: the 5s default.",
			want:   DefaultDrainCheckInterval,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := effectivePolicy(v1alpha1.FireboltEngineSpec{DrainCheckInterval: tc.engine},
				&v1alpha1.FireboltEngineClassSpec{DrainCheckInterval: tc.class}).DrainCheckInterval
			if got != tc.want {
				t.Errorf("%s\neffectivePolicy(...).DrainCheckInterval: want %s, got %s", tc.reason, tc.want, got)
			}
		})
	}

	// The poll a draining engine asks Crossplane for.
	in := drainingAt(t, "draining", 0, baseSpec(), replicasSpec(3))
	in.Spec.DrainCheckInterval = ms(10)
	if diff := cmp.Diff(time.Second, Compute(in, Signals{Drain: &scrape.Verdict{Message: "busy"}}, testNow).TTL); diff != "" {
		t.Errorf("Compute(...).TTL while draining with a 10ms interval: -want, +got:\n%s", diff)
	}
}
