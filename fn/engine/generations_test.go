package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

func TestNextGeneration(t *testing.T) {
	inUse := func(gs ...int) func(int) bool {
		return func(g int) bool {
			for _, u := range gs {
				if g == u {
					return true
				}
			}
			return false
		}
	}
	cases := map[string]struct {
		n     int
		inUse func(int) bool
		want  int
	}{
		"Increments":              {n: 0, inUse: inUse(0), want: 1},
		"ReachesTheLastNumber":    {n: 998, inUse: inUse(998), want: v1alpha1.MaxGeneration},
		"WrapsAfterTheLastNumber": {n: v1alpha1.MaxGeneration, inUse: inUse(v1alpha1.MaxGeneration), want: 0},
		"SkipsNumbersInUse":       {n: v1alpha1.MaxGeneration, inUse: inUse(v1alpha1.MaxGeneration, 0, 1), want: 2},
		"MovesALegacyNumberIntoTheSpan": {
			n: 1234, inUse: inUse(1234), want: 235,
		},
		"ANegativeNumberFromAWrittenStatus": {n: -5, inUse: inUse(), want: 996},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := nextGeneration(tc.n, tc.inUse); got != tc.want {
				t.Errorf("nextGeneration(%d): want %d, got %d", tc.n, tc.want, got)
			}
		})
	}
}

// TestGenerationNumbersWrap drives the phase machine across the last
// generation number: numbers stay within three digits, so the engine name
// limit holds at every generation, and a wrapped number never lands on a
// generation that still exists.
func TestGenerationNumbersWrap(t *testing.T) {
	v2 := imageSpec("ghcr.io/firebolt-db/engine:v2")
	v3 := imageSpec("ghcr.io/firebolt-db/engine:v3")
	last := v1alpha1.MaxGeneration
	cases := map[string]struct {
		in   func(t *testing.T) Inputs
		want summary
	}{
		"StableDriftAtTheLastNumberWrapsToZero": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, last, baseSpec())
				in.Spec = v2
				return in
			},
			want: summary{
				Phase: "creating", Current: 0, Active: last, ObservedGeneration: 2, Renderings: []int{0, last},
				Resources: merge(gen(last, true, true), route(true)), Route: last,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"AbandoningSkipsTheActiveNumber": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", last, 0)
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				withGeneration(&in, last, v2, pods{2, 2})
				withRoute(&in, 0)
				in.Spec = v3
				return in
			},
			want: summary{
				Phase: "creating", Current: 1, Active: 0, ObservedGeneration: 2, Renderings: []int{0, 1},
				Resources: merge(gen(0, true, true), gen(last, true, true), route(true)), Route: 0,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"Abandoned"}, TTL: time.Second,
			},
		},
		"StableDriftSkipsALeftoverGeneration": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 5, baseSpec())
				// Objects of generation 6 that the status no longer names.
				rec := renderFor(in, 6, v3)
				for _, s := range generationSuffixes {
					in.Observed[resourceName(6, s)] = observe(rec.Objects.bySuffix(s), 6, s, pods{2, 2})
				}
				in.Spec = v2
				return in
			},
			want: summary{
				Phase: "creating", Current: 7, Active: 5, ObservedGeneration: 2, Renderings: []int{5, 7},
				Resources: merge(gen(5, true, true), route(true)), Route: 5,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
		"ALegacyNumberMovesIntoTheSpan": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 1234, baseSpec())
				in.Spec = v2
				return in
			},
			want: summary{
				Phase: "creating", Current: 235, Active: 1234, ObservedGeneration: 2, Renderings: []int{235, 1234},
				Resources: merge(gen(1234, true, true), route(true)), Route: 1234,
				EngineReady: "False/Rolling", InstanceReady: "True/InstanceReady",
				Events: []string{"NewGeneration"}, TTL: time.Second,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarize(Compute(tc.in(t), Signals{}, testNow))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compute(...): -want, +got:\n%s", diff)
			}
		})
	}
}
