// Package trustset is the set of engine CAs the gateway trusts when it
// re-encrypts to engines. Each engine publishes the CAs of its live
// generations; the instance merges every engine's into one bundle for the
// gateway; and a bundle the gateway serves is replaced only by one that
// drops no CA a live generation may still present. All of it is public:
// CA certificates, never a key.
package trustset

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// AnnotationEngineCAs is where an engine publishes, on its routing
// Service, the PEM CAs of its live generations.
const AnnotationEngineCAs = "firebolt.io/engine-cas"

// Bounds on what one engine may publish: at most three generations live
// at once, and a CA certificate is a few KiB even with a 8192-bit RSA key.
const (
	MaxCAsPerEngine = 3
	MaxEngineBytes  = 24 << 10
)

// CA is one CA certificate as trimmed PEM, and its fingerprint: the hex
// SHA-256 of that PEM, as the original fingerprints the CAs its gateway
// trusts.
type CA struct {
	PEM         string
	Fingerprint string
}

// NewCA checks that pemText is one PEM certificate of a CA and returns it
// trimmed with its fingerprint.
func NewCA(pemText string) (CA, error) {
	trimmed := strings.TrimSpace(pemText)
	block, rest := pem.Decode([]byte(trimmed))
	switch {
	case block == nil:
		return CA{}, errors.New("not PEM")
	case block.Type != "CERTIFICATE":
		return CA{}, fmt.Errorf("a PEM %q block, not a CERTIFICATE", block.Type)
	case len(bytes.TrimSpace(rest)) > 0:
		return CA{}, errors.New("more than one PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return CA{}, fmt.Errorf("not a certificate: %w", err)
	}
	if !cert.IsCA {
		return CA{}, errors.New("a certificate that is not a CA")
	}
	sum := sha256.Sum256([]byte(trimmed))
	return CA{PEM: trimmed, Fingerprint: hex.EncodeToString(sum[:])}, nil
}

// distinct is cas without repeats, sorted by fingerprint, so equal sets
// encode to equal bytes.
func distinct(cas []CA) []CA {
	out := slices.Clone(cas)
	slices.SortFunc(out, func(a, b CA) int { return strings.Compare(a.Fingerprint, b.Fingerprint) })
	return slices.CompactFunc(out, func(a, b CA) bool { return a.Fingerprint == b.Fingerprint })
}

// Encode is what an engine publishes for cas: each distinct CA's PEM,
// sorted by fingerprint, one after another.
func Encode(cas []CA) string {
	d := distinct(cas)
	parts := make([]string, len(d))
	for i, ca := range d {
		parts[i] = ca.PEM
	}
	return strings.Join(parts, "\n")
}

// Decode reads what an engine published, refusing more than MaxEngineBytes
// or MaxCAsPerEngine and any block that is not a CA certificate: an
// engine's Service is written by others too, and a refused value must not
// reach the gateway's trust.
func Decode(published string) ([]CA, error) {
	if len(published) > MaxEngineBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d an engine may publish", len(published), MaxEngineBytes)
	}
	var out []CA
	rest := []byte(strings.TrimSpace(published))
	for len(rest) > 0 {
		block, next := pem.Decode(rest)
		if block == nil {
			return nil, errors.New("text that is not PEM")
		}
		if len(out) == MaxCAsPerEngine {
			return nil, fmt.Errorf("more than %d CAs", MaxCAsPerEngine)
		}
		ca, err := NewCA(string(pem.EncodeToMemory(block)))
		if err != nil {
			return nil, fmt.Errorf("CA %d: %w", len(out)+1, err)
		}
		out = append(out, ca)
		rest = bytes.TrimSpace(next)
	}
	return distinct(out), nil
}

// Bundle merges every engine's CAs into the gateway's ca.crt (each
// distinct CA once, sorted by fingerprint, newline-terminated) and the
// sorted fingerprints of what it holds.
func Bundle(perEngine map[string][]CA) (data string, fingerprints []string) {
	var all []CA
	for _, cas := range perEngine {
		all = append(all, cas...)
	}
	d := distinct(all)
	if len(d) == 0 {
		return "", nil
	}
	fingerprints = make([]string, len(d))
	for i, ca := range d {
		fingerprints[i] = ca.Fingerprint
	}
	return Encode(d) + "\n", fingerprints
}

// Replace says whether the instance may replace the bundle the gateway
// serves (served, nil when there is none) with next. It may when it read
// every engine, or when next keeps every CA served holds: a partial read
// that dropped a CA could cut the gateway off a generation still serving.
func Replace(complete bool, served, next []string) bool {
	if complete || served == nil {
		return true
	}
	for _, fp := range served {
		if !slices.Contains(next, fp) {
			return false
		}
	}
	return true
}
