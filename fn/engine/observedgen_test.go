package engine

import (
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
)

// TestObservedGeneration: the engine publishes its claim's generation
// exactly when that generation's spec is in effect (stable or stopped with
// it, nothing else left), a lower one while a rollout is under way, and
// never a higher one; the composite's own generation (4 in testInputs)
// plays no part.
func TestObservedGeneration(t *testing.T) {
	claim := func(gen int64, matches bool) claimgen.Claim {
		return claimgen.Claim{Resolved: true, Found: true, Generation: gen, SpecMatches: matches}
	}
	cases := map[string]struct {
		reason string
		in     func(t *testing.T) Inputs
		want   int64
	}{
		"StableWithTheClaimsSpec": {
			reason: "Stable with the active generation rendered from the claim's spec: the claim's generation, not the composite's.",
			in:     func(t *testing.T) Inputs { return stableAt(t, 0, baseSpec()) },
			want:   3,
		},
		"StoppedWithTheClaimsSpec": {
			reason: "Stopped counts as the spec in effect.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 2, replicasSpec(0))
				in.Status.Phase = "stopped"
				return in
			},
			want: 3,
		},
		"CompositeNotSyncedYet": {
			reason: "The claim moved on but the composite's spec is not its spec yet: the engine cannot vouch for the new generation.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Claim = claim(4, false)
				in.Status.ObservedGeneration = 3
				return in
			},
			want: 3,
		},
		"ClaimEditRollsOut": {
			reason: "A claim edit that changes the rendering starts a rollout: the old generation stays published.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec = replicasSpec(3)
				in.Claim = claim(4, true)
				in.Status.ObservedGeneration = 3
				return in
			},
			want: 3,
		},
		"ClassEditRollsOut": {
			reason: "A rollout the claim did not ask for (its class changed) still means the claim's generation is not fully in effect.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Status.ObservedGeneration = 3
				in.Spec.EngineClassRef = classRef("big")
				in.Class = foundClass("big", nodeSelectorTemplate("b"))
				return in
			},
			want: 2,
		},
		"OldGenerationStillObserved": {
			reason: "Stable, but an object of the previous generation is still observed: not gone yet.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 1, baseSpec())
				withGeneration(&in, 0, baseSpec(), pods{2, 2})
				delete(in.Renderings, 0)
				in.Status.ObservedGeneration = 3
				return in
			},
			want: 2,
		},
		"Draining": {
			reason: "Draining: the old generation still exists.",
			in: func(t *testing.T) Inputs {
				in := drainingAt(t, "draining", 0, baseSpec(), replicasSpec(3))
				in.Status.ObservedGeneration = 3
				return in
			},
			want: 2,
		},
		"CompositesGenerationNeverLeaks": {
			reason: "A number written by an older function (the composite's generation, 9) is never kept above the claim's.",
			in: func(t *testing.T) Inputs {
				in := rollingAt(t, "creating", 0, baseSpec(), replicasSpec(3))
				in.Status.ObservedGeneration = 9
				return in
			},
			want: 2,
		},
		"InstanceNotReady": {
			reason: "Stable but the spec cannot be rendered to compare: nothing is vouched for.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Instance.Status.MetadataReady = false
				in.Status.ObservedGeneration = 3
				return in
			},
			want: 2,
		},
		"ClaimNotFetchedYet": {
			reason: "Crossplane has not fetched the claim: keep what is published; it calls again with it.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Claim = claimgen.Claim{}
				in.Status.ObservedGeneration = 2
				return in
			},
			want: 2,
		},
		"ClaimGone": {
			reason: "No claim: no generation to vouch for.",
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Claim = claimgen.Claim{Resolved: true}
				return in
			},
			want: 0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Compute(tc.in(t), Signals{}, testNow).Status.ObservedGeneration
			if got != tc.want {
				t.Errorf("%s\nobservedGeneration: want %d, got %d", tc.reason, tc.want, got)
			}
		})
	}
}
