// Package signing decides an instance's signing keys: which keys exist,
// which one signs, which only validate, and when a rotation takes its next
// step. It is pure: the caller reads which keys cert-manager has issued
// and whether every engine runs the current key set, and applies the
// decision (the Certificates to compose, the status to write).
//
// A rotation never opens a validation gap: a new key is promoted to sign
// only once every engine validates it, and a demoted key is dropped only
// retainDuration after every engine stopped signing with it, so a token any
// engine signed is accepted by every other engine. At most one step is
// taken per call, each gated on the render set engines were last given.
package signing

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Policy is the rotation the spec asks for.
type Policy struct {
	// Interval is how long a key signs before the next is minted; 0 keeps
	// one permanent key.
	Interval time.Duration
	// Retain is how long a demoted key still validates once every engine
	// stopped signing with it; nil never removes it (rotation switched off
	// mid-way).
	Retain *time.Duration
	// Algorithm and Size of new keys, recorded in status.
	Algorithm string
	Size      int32
}

// Key is what cert-manager shows of one key's Certificate.
type Key struct {
	// Ready: the Certificate is Ready for its current generation and its
	// CertificateRequest names the public key.
	Ready bool
	// Fingerprint is the hex SHA-256 of the key's DER SubjectPublicKeyInfo.
	Fingerprint string
}

// Fleet is whether every engine of the instance runs the key set the
// previous status renders.
type Fleet struct {
	Converged bool
	// Lagging are engines that do not, sorted.
	Lagging []string
}

// Input is one call's decision input.
type Input struct {
	Now      time.Time
	Instance string
	Policy   Policy
	Previous v1alpha1.AuthStatus
	// Keys are the observed Certificates by key id.
	Keys  map[string]Key
	Fleet Fleet
}

// Decision is what the call decides.
type Decision struct {
	Status v1alpha1.AuthStatus
	// Compose are the key ids whose Certificates the desired state holds:
	// every key in status and a key being minted. A Certificate left out
	// is deleted.
	Compose []string
	// Pending: the Active key is not issued yet (AuthReady waits).
	Pending bool
	// Events are the transitions of the call.
	Events []Event
}

// Event is a transition worth telling.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// maxLagging is how many lagging engines status names.
const maxLagging = 5

// KeyID is the id of the n-th key.
func KeyID(n int64) string { return "signing-" + strconv.FormatInt(n, 10) }

// CertificateName is the Certificate (and Secret) of key id: the first key
// keeps the original's plain name.
func CertificateName(instance, id string) string {
	if id == KeyID(1) {
		return instance + "-auth-signing"
	}
	return instance + "-auth-signing-" + id
}

// Decide is one call of the rotation.
func Decide(in Input) Decision {
	st := Sanitize(in.Instance, in.Previous)
	d := Decision{}
	active := activeIndex(st.SigningKeys)
	if active < 0 {
		// No key yet (first enable, or re-enabled): mint the next one as
		// the Active key. It is recorded only once issued, so a key whose
		// Certificate is not ready is never rendered.
		st.SigningKeys = nil
		id := KeyID(st.SigningKeyGeneration + 1)
		d.Compose = []string{id}
		d.Pending = true
		if k := in.Keys[id]; k.Ready {
			st.SigningKeys = []v1alpha1.SigningKeyStatus{in.newKey(id, k, v1alpha1.SigningKeyActive)}
			st.SigningKeyGeneration++
			d.Pending = false
			d.Events = append(d.Events, Event{Reason: "SigningKeyCreated", Message: fmt.Sprintf("signing key %s is issued and signs tokens", id)})
		}
		clearPending(&st)
		d.Status = st
		return d
	}
	for _, k := range st.SigningKeys {
		d.Compose = append(d.Compose, k.ID)
	}
	d.Events = append(d.Events, in.refresh(&st)...)
	if !in.Keys[st.SigningKeys[active].ID].Ready {
		d.Pending = true
		d.Status = st
		return d
	}

	other := otherIndex(st.SigningKeys, active)
	switch {
	case other < 0:
		clearPending(&st)
		if in.Policy.Interval <= 0 || st.SigningKeys[active].CreatedAt == nil ||
			in.Now.Before(st.SigningKeys[active].CreatedAt.Add(in.Policy.Interval)) {
			break
		}
		id := KeyID(st.SigningKeyGeneration + 1)
		d.Compose = append(d.Compose, id)
		if k := in.Keys[id]; k.Ready {
			st.SigningKeys = append(st.SigningKeys, in.newKey(id, k, v1alpha1.SigningKeyValidationOnly))
			st.SigningKeyGeneration++
			d.Events = append(d.Events, Event{Reason: "SigningKeyMinted", Message: fmt.Sprintf("signing key %s is issued and validates tokens; it signs once every engine validates it", id)})
		}
	case st.SigningKeys[other].Phase == v1alpha1.SigningKeyRemoving:
		if !in.waitFor(&st, v1alpha1.RotationAwaitingRemoval) {
			break
		}
		id := st.SigningKeys[other].ID
		st.SigningKeys = append(st.SigningKeys[:other:other], st.SigningKeys[other+1:]...)
		d.Compose = without(d.Compose, id)
		d.Events = append(d.Events, Event{Reason: "SigningKeyRemoved", Message: fmt.Sprintf("signing key %s is removed: no engine holds it any more", id)})
	case st.SigningKeys[other].DemotedAt == nil:
		if !in.waitFor(&st, v1alpha1.RotationAwaitingPromotion) {
			break
		}
		now := metav1.NewTime(in.Now.UTC().Truncate(time.Second))
		oldID, newID := st.SigningKeys[active].ID, st.SigningKeys[other].ID
		st.SigningKeys[other].Phase = v1alpha1.SigningKeyActive
		st.SigningKeys[active].Phase, st.SigningKeys[active].DemotedAt = v1alpha1.SigningKeyValidationOnly, &now
		d.Events = append(d.Events, Event{Reason: "SigningKeyPromoted", Message: fmt.Sprintf("signing key %s signs tokens; %s only validates them now", newID, oldID)})
	case st.SigningKeys[other].RetireEligibleAt == nil:
		if !in.waitFor(&st, v1alpha1.RotationAwaitingRetireAnchor) {
			break
		}
		now := metav1.NewTime(in.Now.UTC().Truncate(time.Second))
		st.SigningKeys[other].RetireEligibleAt = &now
	default:
		clearPending(&st)
		retain := in.Policy.Retain
		if retain == nil || in.Now.Before(st.SigningKeys[other].RetireEligibleAt.Add(*retain)) {
			break
		}
		st.SigningKeys[other].Phase = v1alpha1.SigningKeyRemoving
		d.Events = append(d.Events, Event{Reason: "SigningKeyRetired", Message: fmt.Sprintf("signing key %s no longer validates tokens: retainDuration has passed since every engine stopped signing with it", st.SigningKeys[other].ID)})
	}
	d.Status = st
	return d
}

// RenderSet is the keys engines are given: the Active key first, then at
// most one other key that is not being removed.
func RenderSet(st v1alpha1.AuthStatus) []v1alpha1.SigningKeyStatus {
	active := activeIndex(st.SigningKeys)
	if active < 0 {
		return nil
	}
	out := []v1alpha1.SigningKeyStatus{st.SigningKeys[active]}
	if o := otherIndex(st.SigningKeys, active); o >= 0 && st.SigningKeys[o].Phase != v1alpha1.SigningKeyRemoving {
		out = append(out, st.SigningKeys[o])
	}
	return out
}

// NextWake is when a timer of the rotation runs out after now (a mint
// due, a retain window over); zero when none is set.
func NextWake(st v1alpha1.AuthStatus, p Policy, now time.Time) time.Time {
	active := activeIndex(st.SigningKeys)
	if active < 0 {
		return time.Time{}
	}
	other := otherIndex(st.SigningKeys, active)
	var at time.Time
	switch {
	case other < 0 && p.Interval > 0 && st.SigningKeys[active].CreatedAt != nil:
		at = st.SigningKeys[active].CreatedAt.Add(p.Interval)
	case other >= 0 && st.SigningKeys[other].RetireEligibleAt != nil && st.SigningKeys[other].Phase == v1alpha1.SigningKeyValidationOnly && p.Retain != nil:
		at = st.SigningKeys[other].RetireEligibleAt.Add(*p.Retain)
	}
	if at.IsZero() || !at.After(now) {
		return time.Time{}
	}
	return at
}

// waitFor says whether a step gated on the fleet may be taken; when not,
// it records what the rotation waits for and on which engines.
func (in Input) waitFor(st *v1alpha1.AuthStatus, step v1alpha1.RotationStep) bool {
	if in.Fleet.Converged {
		clearPending(st)
		return true
	}
	if st.PendingRotationStep != step || st.PendingSince == nil {
		since := metav1.NewTime(in.Now.UTC().Truncate(time.Second))
		st.PendingRotationStep, st.PendingSince = step, &since
	}
	lagging := in.Fleet.Lagging
	st.LaggingEngineCount = int32(min(len(lagging), 1<<30))
	st.LaggingEngines = append([]string(nil), lagging[:min(len(lagging), maxLagging)]...)
	return false
}

// refresh records a key whose public key changed under the same id (its
// Secret was deleted and cert-manager made a new key): engines must roll to
// it, which the changed fingerprint causes.
func (in Input) refresh(st *v1alpha1.AuthStatus) []Event {
	var events []Event
	for i, k := range st.SigningKeys {
		o, ok := in.Keys[k.ID]
		if !ok || !o.Ready || o.Fingerprint == "" || o.Fingerprint == k.ObservedPublicKeyFingerprint {
			continue
		}
		if k.ObservedPublicKeyFingerprint != "" {
			events = append(events, Event{Warning: true, Reason: "SigningKeyMaterialRegenerated",
				Message: fmt.Sprintf("signing key %s has a new public key (its Secret was recreated): engines roll to it", k.ID)})
		}
		st.SigningKeys[i].ObservedPublicKeyFingerprint = o.Fingerprint
	}
	return events
}

func (in Input) newKey(id string, k Key, phase v1alpha1.SigningKeyPhase) v1alpha1.SigningKeyStatus {
	now := metav1.NewTime(in.Now.UTC().Truncate(time.Second))
	return v1alpha1.SigningKeyStatus{
		ID: id, SecretName: CertificateName(in.Instance, id), CreatedAt: &now, ObservedPublicKeyFingerprint: k.Fingerprint,
		Algorithm: in.Policy.Algorithm, Size: in.Policy.Size, Phase: phase,
	}
}

// activeIndex is the Active key (an empty phase reads as Active, as the
// original's); -1 when none.
func activeIndex(keys []v1alpha1.SigningKeyStatus) int {
	for i, k := range keys {
		if k.Phase == v1alpha1.SigningKeyActive || k.Phase == "" {
			return i
		}
	}
	return -1
}

// otherIndex is the key other than the Active one; -1 when none.
func otherIndex(keys []v1alpha1.SigningKeyStatus, active int) int {
	for i := range keys {
		if i != active {
			return i
		}
	}
	return -1
}

func clearPending(st *v1alpha1.AuthStatus) {
	st.PendingRotationStep, st.PendingSince, st.LaggingEngines, st.LaggingEngineCount = "", nil, nil, 0
}

func without(ids []string, id string) []string {
	out := ids[:0:0]
	for _, i := range ids {
		if i != id {
			out = append(out, i)
		}
	}
	return out
}

// Sanitize is st as this package writes it, whatever wrote it: key ids
// signing-<N> with N from 1 to the generation, each once, each Secret named
// from its id (never from status: engines mount it), exactly one Active
// key when there are keys, and at most one other key. A status anyone could
// write must not make engines mount another Secret or sign with a key the
// rotation did not promote.
func Sanitize(instance string, prev v1alpha1.AuthStatus) v1alpha1.AuthStatus {
	st := *prev.DeepCopy()
	if st.SigningKeyGeneration < 0 {
		st.SigningKeyGeneration = 0
	}
	var keys []v1alpha1.SigningKeyStatus
	seen := map[string]bool{}
	for _, k := range st.SigningKeys {
		n, err := strconv.ParseInt(strings.TrimPrefix(k.ID, "signing-"), 10, 64)
		if err != nil || k.ID != KeyID(n) || n < 1 || n > st.SigningKeyGeneration || seen[k.ID] {
			continue
		}
		seen[k.ID] = true
		k.SecretName = CertificateName(instance, k.ID)
		switch k.Phase {
		case "", v1alpha1.SigningKeyActive:
			k.Phase = v1alpha1.SigningKeyActive
		case v1alpha1.SigningKeyValidationOnly, v1alpha1.SigningKeyRemoving:
		default:
			k.Phase = v1alpha1.SigningKeyValidationOnly
		}
		keys = append(keys, k)
	}
	active := activeIndex(keys)
	if active < 0 {
		// Keys without a signer: none of them can be trusted to sign.
		keys = nil
	}
	var out []v1alpha1.SigningKeyStatus
	if active >= 0 {
		out = append(out, keys[active])
	}
	for i, k := range keys {
		if i == active || len(out) == 2 {
			continue
		}
		if k.Phase == v1alpha1.SigningKeyActive {
			// A second Active key was not promoted by the rotation.
			k.Phase, k.DemotedAt, k.RetireEligibleAt = v1alpha1.SigningKeyRemoving, nil, nil
		}
		out = append(out, k)
	}
	// Oldest first, as status says, whichever key is Active: the order
	// does not move when a key is promoted.
	slices.SortFunc(out, func(a, b v1alpha1.SigningKeyStatus) int { return cmp.Compare(keyNumber(a.ID), keyNumber(b.ID)) })
	st.SigningKeys = out
	if len(st.LaggingEngines) > maxLagging {
		st.LaggingEngines = st.LaggingEngines[:maxLagging]
	}
	return st
}

// keyNumber is N of a key id signing-<N> Sanitize accepted.
func keyNumber(id string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(id, "signing-"), 10, 64)
	return n
}

// Describe says where the rotation stands, for AuthReady's message.
func Describe(st v1alpha1.AuthStatus) string {
	parts := make([]string, 0, len(st.SigningKeys))
	for _, k := range st.SigningKeys {
		parts = append(parts, k.ID+" "+string(k.Phase))
	}
	return strings.Join(parts, ", ")
}
