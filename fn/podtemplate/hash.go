package podtemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// Hash returns the first 16 hex characters of the SHA-256 of tpl's JSON
// encoding. encoding/json writes struct fields in declaration order and map
// keys sorted, and resource quantities in canonical form, so equal templates
// hash equal whatever their map insertion order.
//
// A nil template hashes to "" (no class: the engine carries no class-hash
// annotation). An empty non-nil template hashes like any other template, so
// it differs from nil: referencing a class with an empty template is a
// different source than referencing none.
func Hash(tpl *corev1.PodTemplateSpec) string {
	if tpl == nil {
		return ""
	}
	return ContentHash(tpl)
}

// ContentHash is the original operator's content hash: the first 16 hex
// characters of the SHA-256 of v's JSON encoding.
func ContentHash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Callers hash API types and decoded JSON, which always encode;
		// failing here is a programming error, not bad input.
		panic("podtemplate: cannot encode value to hash: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}
