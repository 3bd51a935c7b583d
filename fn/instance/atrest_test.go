package instance_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
)

// TestAuthAtRestWritesNothing: a call a minute later that is handed the
// status the last call wrote (as Crossplane hands it back, conditions
// included) writes the same status: an instance at rest with auth on does
// not restamp lastReconciled. Every write of the instance's status calls
// each of its engines (they require the claim), so a status that moved on
// every call would keep every engine busy.
func TestAuthAtRestWritesNothing(t *testing.T) {
	k1 := newSigningKey(t)
	o := observedRunning(t)
	o["auth-signing-1"] = issuedCertificate(t, "signing-1")
	required := map[string][]obj{
		"auth-admin-secret":                  {adminSecret(t, map[string]any{"password": b64("s3cret")})},
		"auth-engines":                       {routing(t, "e1", ""), routing(t, "e2", "")},
		"auth-certificate-request-signing-1": {k1.certificateRequest(t, "demo-auth-signing")},
	}
	call := func(t *testing.T, at time.Time, status obj, open bool) (obj, time.Duration) {
		t.Helper()
		f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
			v1alpha1.XFireboltInstanceKind: instance.New(instance.WithPasswordGenerator(noPassword(t)),
				instance.WithClock(func() time.Time { return at })),
		})
		x := xr(t, authSpec, `{phase: Ready, id: `+derivedID+`}`)
		if status != nil {
			x["status"] = status
		}
		rsp, err := f.RunFunction(context.Background(), request{xr: x, observed: o, required: required}.build(t))
		if err != nil {
			t.Fatal(err)
		}
		st := obj(rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)) //nolint:forcetypeassert // Always written.
		// Crossplane writes the conditions the function returns into the
		// status it hands back.
		var conds []any
		for _, c := range rsp.GetConditions() {
			conds = append(conds, map[string]any{"type": c.GetType(), "status": c.GetStatus().String()[len("STATUS_CONDITION_"):],
				"reason": c.GetReason(), "message": c.GetMessage(), "lastTransitionTime": authNow.Add(-time.Hour).Format(time.RFC3339)})
		}
		conds = append(conds, map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": authNow.Add(-time.Hour).Format(time.RFC3339)})
		if open {
			conds = append(conds, map[string]any{"type": "Responsive", "status": "False", "reason": "WatchCircuitOpen", "lastTransitionTime": authNow.Format(time.RFC3339)})
		}
		return st.with(t, "conditions", conds), rsp.GetMeta().GetTtl().AsDuration()
	}
	first, _ := call(t, authNow, nil, false)
	second, ttl := call(t, authNow.Add(time.Minute), first, false)
	third, _ := call(t, authNow.Add(10*time.Minute), second, false)
	// Under an open breaker, too.
	o1, _ := call(t, authNow, nil, true)
	o2, _ := call(t, authNow.Add(20*time.Second), o1, true)
	o3, _ := call(t, authNow.Add(2*time.Minute), o2, true)
	if diff := cmp.Diff(o1, o3); diff != "" {
		t.Errorf("breaker open: -first, +third:\n%s", diff)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("a minute later, handed its own status, the instance wrote another: -first, +second:\n%s", diff)
	}
	if diff := cmp.Diff(second, third); diff != "" {
		t.Errorf("ten minutes later: -second, +third:\n%s", diff)
	}
	if ttl != stableTTL {
		t.Errorf("TTL at rest %s, want the stable TTL %s", ttl, stableTTL)
	}
}
