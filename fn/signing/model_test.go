package signing

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// maxTokenAge is the model's token lifetime, and its retainDuration: the
// shortest retain the spec admits (retainDuration ≥ maxTokenAge + skew,
// skew 0).
const maxTokenAge = 10 * time.Minute

// world is a rotation's environment: the written status (a write can be
// lost), cert-manager issuing Certificates after a delay, and engines that
// take the key set they were last given after a rollout of random length.
// Each engine signs with the Active key of the set it runs and validates
// every key of it; every key it ever signed with is remembered with the
// last time it did, since a token it issued then is valid for maxTokenAge.
type world struct {
	// draw picks a number in [lo, hi].
	draw   func(lo, hi int, label string) int
	now    time.Time
	status v1alpha1.AuthStatus
	policy Policy
	// certs are the composed Certificates and when each is issued.
	certs map[string]time.Time
	// engines run a render set; target is the set they roll to.
	engines []*engine
	// naive anchors the retain window at demotion (the original model's
	// wrong configuration), to show the invariants catch it.
	naive bool
}

type engine struct {
	running, target []string // key ids, the signer first
	readyAt         time.Time
	signedUntil     map[string]time.Time
}

// call is one reconcile of the instance: Decide on what is observed, then
// the writes (the Certificates, then the status, which may be lost).
func (w *world) call() {
	keys := map[string]Key{}
	for id, at := range w.certs {
		if !w.now.Before(at) {
			keys[id] = Key{Ready: true, Fingerprint: "fp-" + id}
		}
	}
	d := Decide(Input{Now: w.now, Instance: "fb", Policy: w.policy, Previous: w.status, Keys: keys, Fleet: w.fleet()})
	if w.naive {
		for i, k := range d.Status.SigningKeys {
			if k.DemotedAt != nil && k.RetireEligibleAt == nil {
				d.Status.SigningKeys[i].RetireEligibleAt = k.DemotedAt
			}
		}
	}
	composed := map[string]time.Time{}
	for _, id := range d.Compose {
		at, ok := w.certs[id]
		if !ok {
			at = w.now.Add(time.Duration(w.draw(0, 120, "issue delay")) * time.Second)
		}
		composed[id] = at
	}
	w.certs = composed
	if w.draw(0, 9, "status write lost") > 0 {
		w.status = d.Status
	}
}

// fleet is whether every engine runs what the written status renders.
func (w *world) fleet() Fleet {
	want := ids(RenderSet(Sanitize("fb", w.status)))
	f := Fleet{Converged: true}
	for i, e := range w.engines {
		if !slices.Equal(e.running, want) {
			f.Converged = false
			f.Lagging = append(f.Lagging, "e"+string(rune('1'+i)))
		}
	}
	return f
}

// step advances the world: engines are given the written status's render
// set and finish rollouts, time passes, the instance reconciles.
func (w *world) step() {
	set := ids(RenderSet(Sanitize("fb", w.status)))
	for _, e := range w.engines {
		if !slices.Equal(e.target, set) {
			e.target = set
			e.readyAt = w.now.Add(time.Duration(w.draw(1, 600, "rollout")) * time.Second)
		}
		if !w.now.Before(e.readyAt) && !slices.Equal(e.running, e.target) {
			w.sign(e)
			e.running = e.target
		}
	}
	w.now = w.now.Add(time.Duration(w.draw(1, 900, "time passes")) * time.Second)
	for _, e := range w.engines {
		w.sign(e)
	}
	w.call()
}

// sign records that e signed with its signer up to now.
func (w *world) sign(e *engine) {
	if len(e.running) > 0 {
		e.signedUntil[e.running[0]] = w.now
	}
}

// check asserts the rotation's invariants on what the engines run and
// what is written.
func (w *world) check(step int) error {
	st := Sanitize("fb", w.status)
	active := 0
	for _, k := range st.SigningKeys {
		if k.Phase == v1alpha1.SigningKeyActive {
			active++
		}
	}
	if len(st.SigningKeys) > 0 && active != 1 {
		return fmt.Errorf("step %d: %d Active keys: %s", step, active, Describe(st))
	}
	for i, e := range w.engines {
		for _, id := range e.running {
			if at, ok := w.certs[id]; !ok || w.now.Before(at) {
				return fmt.Errorf("step %d: engine %d runs key %s whose Certificate is gone or not issued", step, i+1, id)
			}
		}
		// No token an engine signed and that is still valid is rejected by
		// any engine.
		for id, until := range e.signedUntil {
			if !w.now.Before(until.Add(maxTokenAge)) {
				continue
			}
			for j, o := range w.engines {
				// An engine that runs no key yet (auth being turned on)
				// checks no token.
				if len(o.running) > 0 && !slices.Contains(o.running, id) {
					return fmt.Errorf("step %d: engine %d signed with %s until %s (valid until %s), engine %d runs %v without it; status %s",
						step, i+1, id, until.Format(time.TimeOnly), until.Add(maxTokenAge).Format(time.TimeOnly), j+1, o.running, Describe(st))
				}
			}
		}
	}
	return nil
}

func ids(keys []v1alpha1.SigningKeyStatus) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.ID)
	}
	return out
}

func newWorld(draw func(lo, hi int, label string) int, naive bool) *world {
	retain := maxTokenAge
	w := &world{
		draw: draw, now: time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), naive: naive,
		policy: Policy{Interval: time.Duration(draw(10, 120, "interval minutes")) * time.Minute, Retain: &retain, Algorithm: "ECDSA", Size: 384},
		certs:  map[string]time.Time{},
	}
	for range draw(1, 3, "engines") {
		w.engines = append(w.engines, &engine{signedUntil: map[string]time.Time{}})
	}
	return w
}

// run steps w, checking after every step; the first violation is returned.
func (w *world) run(steps int) error {
	for i := range steps {
		w.step()
		if err := w.check(i); err != nil {
			return err
		}
	}
	return nil
}

// TestRotationModel runs random worlds through several rotations and checks
// after every step: at most one Active key; no engine runs a key whose
// Certificate is gone or not yet issued; no token an engine signed is
// rejected by another engine while it is valid.
func TestRotationModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newWorld(func(lo, hi int, label string) int { return rapid.IntRange(lo, hi).Draw(t, label) }, false)
		if err := w.run(120); err != nil {
			t.Fatal(err)
		}
		if w.status.SigningKeyGeneration < 2 {
			t.Fatalf("no rotation in 120 steps: %s", Describe(w.status))
		}
	})
}

// TestRotationModelCatchesNaiveRetain is the mutation check: counting
// retainDuration from demotion, not from the moment every engine stopped
// signing with the key, drops a key a lagging engine still signs with.
func TestRotationModelCatchesNaiveRetain(t *testing.T) {
	for seed := range 500 {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		w := newWorld(func(lo, hi int, _ string) int { return lo + r.IntN(hi-lo+1) }, true)
		if err := w.run(120); err != nil {
			if !strings.Contains(err.Error(), "signed with") {
				t.Fatalf("seed %d: the naive rotation failed another invariant first: %v", seed, err)
			}
			t.Logf("seed %d: %v", seed, err)
			return
		}
	}
	t.Fatal("counting retainDuration from demotion never opened a validation gap in 500 runs: the model does not exercise lagging engines")
}
