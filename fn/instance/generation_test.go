package instance_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

// instanceClaim is the FireboltInstance claim at generation gen with the
// default spec (plus Crossplane's resourceRef), as Crossplane sends it when
// asked for it.
func instanceClaim(t *testing.T, gen int, spec string) obj {
	c := parse(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: demo, namespace: firebolt}
spec: {resourceRef: {apiVersion: compute.firebolt.io/v1alpha1, kind: XFireboltInstance, name: demo-m4x8t}}
`)
	return c.with(t, "metadata.generation", gen, "spec", parse(t, spec).with(t, "resourceRef", c["spec"].(map[string]any)["resourceRef"]))
}

// TestRunFunctionObservedGeneration: the instance publishes its claim's
// generation once every object was composed from that generation's spec
// (recorded in status.composedGeneration by an earlier call) and every
// workload is rolled out and ready; the composite's own generation (7
// here) plays no part.
func TestRunFunctionObservedGeneration(t *testing.T) {
	all := func(t *testing.T) map[string]obj {
		return merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
	}
	ready := func(t *testing.T, st obj) want {
		res := all(t)
		return want{status: st, ready: true, resources: res, readyRes: allReady(keys(res)...), conditions: conditionsReady(), ttl: stableTTL}
	}
	readyStatus := func(observed, composed int) obj {
		s := status("Ready", derivedID, true, true).with(t, "observedGeneration", observed)
		if composed > 0 {
			s = s.with(t, "composedGeneration", composed)
		}
		return s
	}
	xrAt := func(t *testing.T, observed, composed int) obj {
		st := `{phase: Ready, id: ` + derivedID + `, observedGeneration: ` + strconv.Itoa(observed) + `, composedGeneration: ` + strconv.Itoa(composed) + `,
  conditions: [{type: MetadataReady, status: "True", reason: Ready}, {type: GatewayReady, status: "True", reason: Ready}]}`
		return xr(t, defaultSpec, st).with(t, "metadata.generation", 7)
	}
	cases := map[string]struct {
		reason string
		req    func(t *testing.T) request
		want   func(t *testing.T) want
	}{
		"InEffect": {
			reason: "Everything was composed from generation 2 and is ready: generation 2 is published, not the composite's 7.",
			req: func(t *testing.T) request {
				return request{xr: xrAt(t, 1, 2), observed: observedRunning(t), required: map[string][]obj{"claim": {instanceClaim(t, 2, defaultSpec)}}}
			},
			want: func(t *testing.T) want { return ready(t, readyStatus(2, 2)) },
		},
		"FirstCallForAnEdit": {
			reason: "The composite just received generation 3: this response composes it, so it is recorded, but what is observed is generation 2's.",
			req: func(t *testing.T) request {
				return request{xr: xrAt(t, 2, 2), observed: observedRunning(t), required: map[string][]obj{"claim": {instanceClaim(t, 3, defaultSpec)}}}
			},
			want: func(t *testing.T) want { return ready(t, readyStatus(2, 3)) },
		},
		"EditNotSyncedYet": {
			reason: "The claim's generation 3 asks for three gateway replicas, the composite still holds generation 2's spec: nothing moves.",
			req: func(t *testing.T) request {
				return request{xr: xrAt(t, 2, 2), observed: observedRunning(t), required: map[string][]obj{"claim": {instanceClaim(t, 3, `{metadata: {}, gateway: {replicas: 3}}`)}}}
			},
			want: func(t *testing.T) want { return ready(t, readyStatus(2, 2)) },
		},
		"RollingOut": {
			reason: "Generation 3 is composed but the gateway's Deployment has not rolled it out: the instance stays Ready (the gateway serves) and generation 2 stays published.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["gateway"] = o["gateway"].with(t, "metadata.generation", 2)
				return request{xr: xrAt(t, 2, 3), observed: o, required: map[string][]obj{"claim": {instanceClaim(t, 3, defaultSpec)}}}
			},
			want: func(t *testing.T) want {
				w := ready(t, readyStatus(2, 3))
				w.readyRes["gateway"] = false
				return w
			},
		},
		"RolledOut": {
			reason: "Generation 3 composed and rolled out: published.",
			req: func(t *testing.T) request {
				return request{xr: xrAt(t, 2, 3), observed: observedRunning(t), required: map[string][]obj{"claim": {instanceClaim(t, 3, defaultSpec)}}}
			},
			want: func(t *testing.T) want { return ready(t, readyStatus(3, 3)) },
		},
		"NeverAboveTheClaim": {
			reason: "A number above the claim's generation (from an older function) drops below it at once.",
			req: func(t *testing.T) request {
				return request{xr: xrAt(t, 7, 2), observed: observedRunning(t), required: map[string][]obj{"claim": {instanceClaim(t, 3, defaultSpec)}}}
			},
			want: func(t *testing.T) want { return ready(t, readyStatus(2, 3)) },
		},
		"ClaimGone": {
			reason: "Crossplane found no claim: no generation to vouch for.",
			req: func(t *testing.T) request {
				return request{xr: xrAt(t, 2, 2), observed: observedRunning(t), required: map[string][]obj{"claim": nil}}
			},
			want: func(t *testing.T) want { return ready(t, readyStatus(0, 2)) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := function(noPassword(t)).RunFunction(context.Background(), tc.req(t).build(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(t).build(t), withoutEngineState(t, rsp), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
