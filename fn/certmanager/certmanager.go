// Package certmanager renders cert-manager Certificates the way the
// original operator asks for them, and reads the public half of what
// cert-manager makes of them: whether a Certificate is issued, the
// CertificateRequest of its current revision, and that request's issued
// certificate and CA. Nothing here reads a Secret: private keys stay where
// cert-manager writes them, and the function never receives one.
package certmanager

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"math"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// APIVersion is cert-manager's API the Certificates are written in.
const APIVersion = "cert-manager.io/v1"

// maxPEMField bounds a base64 PEM field read from a CertificateRequest:
// cert-manager's own requests are a few KiB, and the status is untrusted.
const maxPEMField = 64 << 10

// Spec is one Certificate: its Secret has the same name, both carry
// Labels, cm names the issuer, key and durations, and Duration and
// RenewBefore are the defaults for an unset or non-positive cm value.
// Extra holds what differs between certificates: names, usages, the
// private key.
type Spec struct {
	Name, Namespace       string
	Labels                map[string]string
	Issuer                v1alpha1.CertManagerSpec
	Duration, RenewBefore time.Duration
	Extra                 map[string]any
}

// Certificate renders s. A renewBefore not shorter than the duration is
// left out, so cert-manager's own default (a third of it) applies, as in
// the original.
func Certificate(s Spec) *unstructured.Unstructured {
	duration, renew := s.Duration, s.RenewBefore
	if d := s.Issuer.Duration; d != nil && d.Duration > 0 {
		duration = d.Duration
	}
	if r := s.Issuer.RenewBefore; r != nil && r.Duration > 0 {
		renew = r.Duration
	}
	kind := s.Issuer.IssuerRef.Kind
	if kind == "" {
		kind = "ClusterIssuer"
	}
	labels := make(map[string]any, len(s.Labels))
	for k, v := range s.Labels {
		labels[k] = v
	}
	spec := make(map[string]any, len(s.Extra)+5)
	for k, v := range s.Extra {
		spec[k] = v
	}
	spec["secretName"] = s.Name
	spec["duration"] = duration.String()
	spec["issuerRef"] = map[string]any{"name": s.Issuer.IssuerRef.Name, "kind": kind, "group": "cert-manager.io"}
	// The Secret is labelled too, so what the product minted is found by
	// label, as the original finds it.
	spec["secretTemplate"] = map[string]any{"labels": labels}
	if renew < duration {
		spec["renewBefore"] = renew.String()
	}
	metaLabels := make(map[string]any, len(labels))
	for k, v := range labels {
		metaLabels[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": APIVersion,
		"kind":       "Certificate",
		"metadata":   map[string]any{"name": s.Name, "namespace": s.Namespace, "labels": metaLabels},
		"spec":       spec,
	}}
}

// Ready reports whether an observed Certificate's Ready condition is True
// for its current metadata.generation: a condition computed for an older
// spec says nothing about this one.
func Ready(crt map[string]any) bool {
	if crt == nil {
		return false
	}
	gen, ok := integer(crt, "metadata", "generation")
	if !ok {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(crt, "status", "conditions")
	for _, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		observed, ok := integer(m, "observedGeneration")
		return ok && m["status"] == "True" && observed == gen
	}
	return false
}

// RequestName is the name of the CertificateRequest of an observed
// Certificate's current revision, <certificate>-<status.revision> as
// cert-manager names them; "" before the first issue.
func RequestName(crt map[string]any) string {
	if crt == nil {
		return ""
	}
	name, _, _ := unstructured.NestedString(crt, "metadata", "name")
	rev, ok := integer(crt, "status", "revision")
	if name == "" || !ok || rev < 1 {
		return ""
	}
	return name + "-" + strconv.FormatInt(rev, 10)
}

// CA is the CA certificate a CertificateRequest was issued under
// (status.ca: the top of the issuer's chain), as trimmed PEM, and its
// fingerprint: the hex SHA-256 of that PEM, as the original fingerprints
// the CAs its gateway trusts. ok is false when the field is absent, too
// large, or not one PEM certificate of a CA.
func CA(cr map[string]any) (pemBytes []byte, fingerprint string, ok bool) {
	b64, _, _ := unstructured.NestedString(cr, "status", "ca")
	block, raw := decodePEMField(b64)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, "", false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !cert.IsCA {
		return nil, "", false
	}
	// Trimmed, so the same CA with or without a final newline has one
	// fingerprint.
	trimmed := bytes.TrimSpace(raw)
	sum := sha256.Sum256(trimmed)
	return trimmed, hex.EncodeToString(sum[:]), true
}

// PublicKeyFingerprint is the hex SHA-256 of the DER SubjectPublicKeyInfo
// a CertificateRequest's issued certificate (else its request) names; ""
// when neither parses.
func PublicKeyFingerprint(cr map[string]any) string {
	pick := func(path ...string) []byte {
		s, _, _ := unstructured.NestedString(cr, path...)
		block, _ := decodePEMField(s)
		if block == nil {
			return nil
		}
		return block.Bytes
	}
	if der := pick("status", "certificate"); der != nil {
		if cert, err := x509.ParseCertificate(der); err == nil {
			return SPKIFingerprint(cert.RawSubjectPublicKeyInfo)
		}
	}
	if der := pick("spec", "request"); der != nil {
		if csr, err := x509.ParseCertificateRequest(der); err == nil {
			return SPKIFingerprint(csr.RawSubjectPublicKeyInfo)
		}
	}
	return ""
}

// SPKIFingerprint is the hex SHA-256 of a DER SubjectPublicKeyInfo.
func SPKIFingerprint(spki []byte) string {
	sum := sha256.Sum256(spki)
	return hex.EncodeToString(sum[:])
}

// integer reads a whole number at path, as int64 (Kubernetes' JSON
// decoding) or float64 (a protobuf Struct, which is how Crossplane hands a
// function its observed objects); ok is false when it is absent, of
// another type, or not whole.
func integer(obj map[string]any, path ...string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if !found || err != nil {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

// decodePEMField decodes a base64 field holding PEM: its first block and
// the decoded bytes; a nil block when the field is empty, over
// maxPEMField, not base64, or holds no PEM block.
func decodePEMField(b64 string) (*pem.Block, []byte) {
	if b64 == "" || len(b64) > maxPEMField {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, nil
	}
	block, _ := pem.Decode(raw)
	return block, raw
}

// CertificateFingerprint is the hex SHA-256 of the certificate chain a
// CertificateRequest was issued (status.certificate), trimmed PEM as the
// original fingerprints a serving certificate; "" before it is issued or
// when it is not PEM. It tells a renewal of the same Certificate apart.
func CertificateFingerprint(cr map[string]any) string {
	b64, _, _ := unstructured.NestedString(cr, "status", "certificate")
	block, raw := decodePEMField(b64)
	if block == nil || block.Type != "CERTIFICATE" {
		return ""
	}
	sum := sha256.Sum256(bytes.TrimSpace(raw))
	return hex.EncodeToString(sum[:])
}
