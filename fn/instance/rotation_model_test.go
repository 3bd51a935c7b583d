package instance_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// The model's tokens live 10 minutes with no skew, and a demoted key is
// kept the shortest time the spec admits: exactly that.
const (
	modelTokenAge = 10 * time.Minute
	modelSpec     = `
metadata: {}
gateway: {}
auth:
  enabled: true
  local:
    admin: {name: firebolt, password: {name: admin-pw, key: password}}
    signingAlgorithm: ES384
    maxTokenAge: 10m
    clockSkewTolerance: 0s
    signingKeys:
      certManager: {issuerRef: {name: internal-ca, kind: ClusterIssuer}, algorithm: ECDSA, size: 384}
      retainDuration: 10m
      rotationInterval: `
)

// modelKeys are public keys cert-manager hands out, one per key id in turn.
var (
	modelKeysOnce sync.Once
	modelKeys     []signingKey
)

func makeModelKeys(t *testing.T) {
	modelKeysOnce.Do(func() {
		for range 8 {
			modelKeys = append(modelKeys, newSigningKey(t))
		}
	})
}

// rotationWorld is an instance with auth reconciled through RunFunction as
// Crossplane does it (requirements fetched and the function called again,
// then the Certificates applied, then the status), in a cluster where
// cert-manager issues Certificates after a delay and engines roll to the
// keys they are given. A call's writes can be cut short: nothing applied
// (a crash before the apply) or the status lost (a crash or a rejected
// write after it).
type rotationWorld struct {
	draw  func(lo, hi int, label string) int
	fn    *fn.Function
	now   time.Time
	spec  string
	auth  v1alpha1.AuthSpec
	xrSt  obj
	certs map[string]time.Time // key id → when cert-manager issues it
	reqs  map[string]*fnv1.ResourceSelector
	eng   []*modelEngine
	// running are the instance's workloads, observed running.
	running map[string]*fnv1.Resource
	// naive anchors the retain window at demotion: the original model's
	// wrong configuration, which the invariants must catch.
	naive bool
}

// modelEngine runs one configuration per live generation, the newest last;
// during a rollout both the old and the new one serve.
type modelEngine struct {
	name        string
	live        [][]v1alpha1.SigningKeyStatus
	target      string
	readyAt     time.Time
	signedUntil map[string]time.Time
}

func newRotationWorld(t *testing.T, draw func(lo, hi int, label string) int, naive bool) *rotationWorld {
	interval := fmt.Sprintf("%dm", draw(10, 120, "interval minutes"))
	w := &rotationWorld{
		draw: draw, now: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), spec: modelSpec + interval + "\n",
		xrSt: obj{"phase": "Ready", "id": derivedID}, certs: map[string]time.Time{}, naive: naive,
		reqs: map[string]*fnv1.ResourceSelector{},
	}
	var s struct {
		Auth v1alpha1.AuthSpec `json:"auth"`
	}
	makeModelKeys(t)
	w.running = map[string]*fnv1.Resource{}
	for rn, o := range observedRunning(t) {
		w.running[rn] = &fnv1.Resource{Resource: o.structpb(t)}
	}
	if err := jsonInto(parse(t, w.spec), &s); err != nil {
		t.Fatal(err)
	}
	w.auth = s.Auth
	w.fn = fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
		v1alpha1.XFireboltInstanceKind: instance.New(instance.WithClock(func() time.Time { return w.now }),
			instance.WithPasswordGenerator(instance.PasswordGeneratorFn(func() (string, error) { return password, nil }))),
	})
	for i := range draw(1, 3, "engines") {
		w.eng = append(w.eng, &modelEngine{name: fmt.Sprintf("e%d", i+1), signedUntil: map[string]time.Time{}})
	}
	return w
}

func (w *rotationWorld) hash(keys []v1alpha1.SigningKeyStatus) string {
	if len(keys) == 0 {
		return ""
	}
	return signing.EngineAuth{Spec: w.auth, Keys: keys, AdminSecretVersion: adminVersion}.Hash()
}

// request is what Crossplane sends: the composite, the composed objects
// (the instance's workloads running, the Certificates as cert-manager left
// them) and what the last response required.
func (w *rotationWorld) request(t *testing.T) *fnv1.RunFunctionRequest {
	observed := map[string]obj{}
	for id, at := range w.certs {
		c := wantCertificate(t, id).with(t, "metadata.generation", 1)
		if !w.now.Before(at) {
			c = issuedCertificate(t, id)
		}
		observed["auth-"+id] = c
	}
	required := map[string][]obj{}
	for name := range w.reqs {
		switch {
		case name == "auth-admin-secret":
			required[name] = []obj{adminSecret(t, map[string]any{"password": b64("s3cret")})}
		case name == "auth-engines":
			for _, e := range w.eng {
				required[name] = append(required[name], routing(t, e.name, w.hash(e.live0())))
			}
		case strings.HasPrefix(name, "auth-certificate-request-"):
			id := strings.TrimPrefix(name, "auth-certificate-request-")
			if at, ok := w.certs[id]; ok && !w.now.Before(at) {
				required[name] = []obj{w.key(id).certificateRequest(t, signing.CertificateName(claim, id))}
			} else {
				required[name] = nil
			}
		}
	}
	req := request{xr: xr(t, w.spec, mustJSON(t, w.xrSt)), observed: observed, required: required}.build(t)
	if req.Observed.Resources == nil {
		req.Observed.Resources = map[string]*fnv1.Resource{}
	}
	// The running instance's objects are the same in every call: built
	// once, shared (the function only reads a request).
	for rn, r := range w.running {
		req.Observed.Resources[rn] = r
	}
	return req
}

func (w *rotationWorld) key(id string) signingKey {
	var n int
	if _, err := fmt.Sscanf(id, "signing-%d", &n); err != nil || n < 1 {
		panic("model: not a key id: " + id)
	}
	return modelKeys[(n-1)%len(modelKeys)]
}

// live0 is what the engine publishes: the configuration of its oldest live
// generation (the routing Service moves only when a rollout is over).
func (e *modelEngine) live0() []v1alpha1.SigningKeyStatus {
	if len(e.live) == 0 {
		return nil
	}
	return e.live[0]
}

// call is one reconcile; it returns what the function did wrong, if
// anything, about what it may read or compose.
func (w *rotationWorld) call(t *testing.T) error {
	var rsp *fnv1.RunFunctionResponse
	for range 5 {
		var err error
		rsp, err = w.fn.RunFunction(context.Background(), w.request(t))
		if err != nil {
			return err
		}
		if sameKeys(rsp.GetRequirements().GetResources(), w.reqs) {
			break
		}
		w.reqs = rsp.GetRequirements().GetResources()
	}
	for name, sel := range rsp.GetRequirements().GetResources() {
		if sel.GetKind() == "Secret" && sel.GetMatchName() != "admin-pw" && sel.GetMatchName() != "demo-metadata-postgres-creds" {
			return fmt.Errorf("requirement %s asks for Secret %s: a signing key's Secret must never reach the function", name, sel.GetMatchName())
		}
	}
	if f := rsp.GetResults(); len(f) > 0 && f[0].GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
		return fmt.Errorf("fatal: %s", f[0].GetMessage())
	}
	switch w.draw(0, 9, "writes") {
	case 0: // Crash before anything is applied.
		return nil
	default:
		certs := map[string]time.Time{}
		for rn, r := range rsp.GetDesired().GetResources() {
			id, ok := strings.CutPrefix(rn, "auth-")
			if !ok {
				continue
			}
			if r.GetResource().AsMap()["kind"] == "Secret" {
				return fmt.Errorf("desired %s is a Secret", rn)
			}
			at, ok := w.certs[id]
			if !ok {
				at = w.now.Add(time.Duration(w.draw(0, 120, "issue delay")) * time.Second)
			}
			certs[id] = at
		}
		w.certs = certs
	}
	if w.draw(0, 9, "status write lost") == 0 {
		return nil
	}
	st := obj(rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)) //nolint:forcetypeassert // Every response writes a status.
	if w.naive {
		anchorAtDemotion(st)
	}
	w.xrSt = st
	return nil
}

// anchorAtDemotion is the naive rotation: retainDuration counts from a
// key's demotion, not from when every engine stopped signing with it.
func anchorAtDemotion(st obj) {
	auth, _ := st["auth"].(map[string]any)
	keys, _ := auth["signingKeys"].([]any)
	for _, k := range keys {
		m, _ := k.(map[string]any)
		if d, ok := m["demotedAt"]; ok && m["retireEligibleAt"] == nil {
			m["retireEligibleAt"] = d
		}
	}
}

func sameKeys(a, b map[string]*fnv1.ResourceSelector) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

// status is the written status.auth.
func (w *rotationWorld) status(t *testing.T) v1alpha1.AuthStatus {
	var s struct {
		Auth v1alpha1.AuthStatus `json:"auth"`
	}
	if err := jsonInto(w.xrSt, &s); err != nil {
		t.Fatal(err)
	}
	return s.Auth
}

// step: engines take the keys the written status gives them and finish
// rollouts, time passes with every live generation signing, the instance
// reconciles.
func (w *rotationWorld) step(t *testing.T) error {
	st := w.status(t)
	target, _ := signing.ForEngine(claim, &w.auth, &st, adminVersion)
	for _, e := range w.eng {
		if h := w.hash(target.Keys); h != "" && h != e.target {
			e.target = h
			e.live = append(e.live, target.Keys)
			e.readyAt = w.now.Add(time.Duration(w.draw(1, 600, "rollout")) * time.Second)
		}
		if len(e.live) > 1 && !w.now.Before(e.readyAt) {
			e.live = e.live[len(e.live)-1:]
		}
		e.sign(w.now)
	}
	w.now = w.now.Add(time.Duration(w.draw(1, 900, "time passes")) * time.Second)
	for _, e := range w.eng {
		e.sign(w.now)
	}
	return w.call(t)
}

func (e *modelEngine) sign(now time.Time) {
	for _, keys := range e.live {
		e.signedUntil[keys[0].ID] = now
	}
}

// check asserts the rotation's invariants: at most one Active key; no
// generation of any engine runs a key whose Certificate is gone or not
// issued; no token any generation signed is rejected by another while it
// is valid.
func (w *rotationWorld) check(t *testing.T, step int) error {
	st := w.status(t)
	active := 0
	for _, k := range st.SigningKeys {
		if k.Phase == v1alpha1.SigningKeyActive || k.Phase == "" {
			active++
		}
	}
	if active > 1 {
		return fmt.Errorf("step %d: %d Active keys: %s", step, active, signing.Describe(st))
	}
	for _, e := range w.eng {
		for _, keys := range e.live {
			for _, k := range keys {
				if at, ok := w.certs[k.ID]; !ok || w.now.Before(at) {
					return fmt.Errorf("step %d: %s runs key %s whose Certificate is gone or not issued", step, e.name, k.ID)
				}
			}
		}
		for id, until := range e.signedUntil {
			if !w.now.Before(until.Add(modelTokenAge)) {
				continue
			}
			for _, o := range w.eng {
				for _, keys := range o.live {
					if !slices.ContainsFunc(keys, func(k v1alpha1.SigningKeyStatus) bool { return k.ID == id }) {
						return fmt.Errorf("step %d: %s signed with %s until %s (valid until %s), a generation of %s runs %s without it; status %s",
							step, e.name, id, until.Format(time.TimeOnly), until.Add(modelTokenAge).Format(time.TimeOnly), o.name, ids(keys), signing.Describe(st))
					}
				}
			}
		}
	}
	return nil
}

func ids(keys []v1alpha1.SigningKeyStatus) string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.ID)
	}
	return strings.Join(out, ",")
}

func (w *rotationWorld) run(t *testing.T, steps int) error {
	for i := range steps {
		if err := w.step(t); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		if err := w.check(t, i); err != nil {
			return err
		}
	}
	return nil
}

// TestRotationThroughRunFunction runs random worlds through rotations and
// checks the invariants after every step. rapid starts from the smallest
// draws (a second passes per step, every write lost), which rotate
// nothing, so that rotations happen is asserted over all runs.
func TestRotationThroughRunFunction(t *testing.T) {
	removed := 0
	rapid.Check(t, func(rt *rapid.T) {
		w := newRotationWorld(t, func(lo, hi int, label string) int { return rapid.IntRange(lo, hi).Draw(rt, label) }, false)
		if err := w.run(t, 40); err != nil {
			rt.Fatal(err)
		}
		if w.status(t).SigningKeyGeneration >= 2 && len(w.certs) == 1 {
			removed++
		}
	})
	if removed == 0 {
		t.Fatal("no run took a rotation through to the removal of a key: the model does not exercise the rotation")
	}
	t.Logf("%d runs rotated a key out", removed)
}

// TestRotationThroughRunFunctionCatchesNaiveRetain is the mutation check:
// a rotation whose retain window starts at demotion drops a key a lagging
// engine still signs with, and the model says so.
func TestRotationThroughRunFunctionCatchesNaiveRetain(t *testing.T) {
	for seed := range 200 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		w := newRotationWorld(t, func(lo, hi int, _ string) int { return lo + r.IntN(hi-lo+1) }, true)
		if err := w.run(t, 100); err != nil {
			if !strings.Contains(err.Error(), "signed with") {
				t.Fatalf("seed %d: the naive rotation failed another invariant first: %v", seed, err)
			}
			t.Logf("seed %d: %v", seed, err)
			return
		}
	}
	t.Fatal("counting retainDuration from demotion never opened a validation gap in 200 runs: the model does not exercise lagging engines")
}
