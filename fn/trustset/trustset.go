// Package trustset is the set of engine CAs the gateway trusts when it
// reaches engines over TLS: each CA certificate once, in one order, so the
// same set is the same bundle and the gateway rolls only when the set
// changes. All of it is public: CA certificates, never a key.
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

// encode is the distinct CAs' PEM, sorted by fingerprint, one after
// another.
func encode(d []CA) string {
	parts := make([]string, len(d))
	for i, ca := range d {
		parts[i] = ca.PEM
	}
	return strings.Join(parts, "\n")
}

// Bundle merges every source's CAs into the gateway's ca.crt (each
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
	return encode(d) + "\n", fingerprints
}
