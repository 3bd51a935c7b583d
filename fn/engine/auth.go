package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// hashLen is the length of every hash this function writes (rendering
// hashes, podtemplate.ContentHash; signing.EngineAuth.Hash): 16 hex digits.
const hashLen = 16

// isHash: s has the shape of a hash this function writes. Anything else
// read from a recording or a status is treated as no hash, so a hostile
// one is never published or compared.
func isHash(s string) bool {
	if len(s) != hashLen {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// recordedAuthHash is the auth-hash annotation of a recorded StatefulSet:
// the hash of the authentication its pods run; "" without one.
func recordedAuthHash(rec Recording) string {
	h, _, _ := unstructured.NestedString(rec.Objects.StatefulSet, "metadata", "annotations", signing.AnnotationAuthHash)
	if !isHash(h) {
		return ""
	}
	return h
}

// observedAuthHash is status.observedAuthHash after this call, as the
// original's: at rest (stable or stopped) the auth hash of the active
// generation's recorded StatefulSet, "" when it runs no authentication or
// has no usable recording (nothing is vouched for); during a rollout the
// previous value, so the instance keeps waiting for this engine until the
// rollout has ended.
func (m *machine) observedAuthHash() string {
	switch m.next.Phase {
	case v1alpha1.EnginePhaseStable, v1alpha1.EnginePhaseStopped:
	default:
		if prev := m.in.Status.ObservedAuthHash; isHash(prev) {
			return prev
		}
		return ""
	}
	n := m.next.ActiveGeneration
	rec, ok := m.recorded[n]
	if !ok {
		rec, ok = m.in.Renderings[n]
	}
	if !ok || !rec.usable() {
		return ""
	}
	return recordedAuthHash(rec)
}
