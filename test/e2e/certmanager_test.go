package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// certIssueTimeout bounds one issuance: key, request, approval, signing,
// Secret, readiness, each a controller's reaction within seconds.
const certIssueTimeout = 2 * time.Minute

// Annotations cert-manager puts on the CertificateRequests it makes for a
// Certificate, and on the Secret it writes.
const (
	annotationCertificateName = "cert-manager.io/certificate-name"
	annotationRevision        = "cert-manager.io/certificate-revision"
)

// TestCertManagerIssuesAndRenews is a smoke test of the stack's cert-manager,
// used the way the instance will use it for a signing key: a Certificate for
// an ECDSA P-384 key in PKCS#8, never rotated, for digital signatures, from
// the CA ClusterIssuer. It is Ready for its generation with tls.crt, tls.key
// and ca.crt in its Secret (labelled from its secretTemplate), and the
// CertificateRequest of its revision, named <certificate>-<revision>, holds
// the issued certificate and the CSR for the Secret's public key: what the
// function reads instead of the Secret. A renewal (Issuing=True, as cmctl
// renew sets it) issues the next revision for the same key and
// garbage-collects the previous one's request; a deleted Secret is issued
// again at a later revision for a new key, since a key that is gone cannot
// be kept.
func TestCertManagerIssuesAndRenews(t *testing.T) {
	s := newScenario(t, "cert-manager-smoke")
	ctx := s.ctx
	const name, secretName = "signing", "signing-key"

	cmLog := cp.Process(harness.CertManagerProcess)
	offset := cmLog.LogSize()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("===== cert-manager log lines about %s (full log: %s)\n%s", s.ns, cmLog.Log,
				cmLog.LogLines(offset, 200, func(l string) bool { return strings.Contains(l, s.ns) }))
			return
		}
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cp.Kube.CoreV1().Namespaces().Delete(dctx, s.ns, metav1.DeleteOptions{}); err != nil {
			t.Logf("cleanup: cannot delete namespace %s: %v", s.ns, err)
		}
	})

	// deploy/rbac.yaml lets Crossplane compose Certificates and read the
	// CertificateRequests cert-manager makes for them.
	s.wait(30*time.Second, "Crossplane allowed to manage Certificates and read CertificateRequests", func(ctx context.Context) (bool, string, error) {
		user := "system:serviceaccount:" + harness.CrossplaneNamespace + ":crossplane"
		for resource, verbs := range map[string][]string{
			"certificates":        {"get", "list", "watch", "create", "update", "patch", "delete"},
			"certificaterequests": {"get", "list", "watch"},
		} {
			for _, verb := range verbs {
				ok, err := allowed(ctx, user, "cert-manager.io", resource, verb)
				if err != nil || !ok {
					return false, fmt.Sprintf("%s %s.cert-manager.io: allowed=%v %v", verb, resource, ok, err), nil
				}
			}
		}
		return true, "", nil
	})

	secretLabels := map[string]any{"firebolt.io/instance": "smoke", "firebolt.io/component": "auth-signing"}
	crt := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": s.ns, "labels": map[string]any{"firebolt.io/instance": "smoke"}},
		"spec": map[string]any{
			"secretName":     secretName,
			"commonName":     "firebolt-jwt-signing",
			"duration":       "8760h",
			"privateKey":     map[string]any{"algorithm": "ECDSA", "size": int64(384), "encoding": "PKCS8", "rotationPolicy": "Never"},
			"usages":         []any{"digital signature"},
			"issuerRef":      map[string]any{"name": harness.CAIssuer, "kind": harness.ClusterIssuerGVK.Kind, "group": harness.ClusterIssuerGVK.Group},
			"secretTemplate": map[string]any{"labels": secretLabels},
		},
	}}
	crt.SetGroupVersionKind(harness.CertificateGVK)
	s.apply(crt)

	// The first issuance. cert-manager may issue twice here: its trigger
	// can run again before its informer sees the Secret it just wrote
	// ("Secret does not exist", revision 2 for the same key), so the test
	// follows the revision the Certificate reports rather than a number.
	issued := s.waitCertificate(name, 0)
	rev1 := revisionOf(issued)
	checkReadyFor(t, issued)
	checkTimes(t, issued)
	sec := s.certSecret(secretName)
	for k, want := range secretLabels {
		if sec.Labels[k] != want {
			t.Errorf("Secret %s label %s = %q, want %q from the secretTemplate", secretName, k, sec.Labels[k], want)
		}
	}
	if ref := metav1.GetControllerOf(sec); ref == nil || ref.UID != issued.GetUID() {
		t.Errorf("Secret %s is controlled by %+v, not Certificate %s: the stack runs cert-manager with --enable-certificate-owner-ref", secretName, ref, name)
	}
	if sec.Annotations[annotationCertificateName] != name {
		t.Errorf("Secret %s annotation %s = %q, want %q", secretName, annotationCertificateName, sec.Annotations[annotationCertificateName], name)
	}
	if !strings.Contains(string(sec.Data[corev1.TLSPrivateKeyKey]), "-----BEGIN PRIVATE KEY-----") {
		t.Errorf("tls.key is not PKCS#8 PEM:\n%.40s...", sec.Data[corev1.TLSPrivateKeyKey])
	}
	leaf := parseCert(t, "tls.crt", sec.Data[corev1.TLSCertKey])
	if pub, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P384() {
		t.Errorf("tls.crt's public key is %T, want ECDSA P-384", leaf.PublicKey)
	}
	if leaf.KeyUsage&x509.KeyUsageDigitalSignature == 0 || len(leaf.ExtKeyUsage) != 0 {
		t.Errorf("tls.crt key usage %b, extended %v; want digital signature only", leaf.KeyUsage, leaf.ExtKeyUsage)
	}
	ca := parseCert(t, "ca.crt", sec.Data[corev1.ServiceAccountRootCAKey])
	if !ca.IsCA {
		t.Error("ca.crt is not a CA certificate")
	}
	if err := leaf.CheckSignatureFrom(ca); err != nil {
		t.Errorf("tls.crt is not signed by ca.crt: %v", err)
	}
	key := fingerprint(leaf.RawSubjectPublicKeyInfo)
	if k := keyFingerprint(t, sec.Data[corev1.TLSPrivateKeyKey]); k != key {
		t.Errorf("tls.key's public key %s is not tls.crt's %s", k, key)
	}
	s.checkRequest(issued, sec, key)

	// Renewal, as cmctl renew does it: Issuing=True on the status. With
	// rotationPolicy Never the key stays; the revision moves on and the
	// previous revision's request is deleted (revisionHistoryLimit unset
	// keeps one).
	s.setIssuing(name)
	renewed := s.waitCertificate(name, rev1)
	rev2 := revisionOf(renewed)
	checkReadyFor(t, renewed)
	sec2 := s.certSecret(secretName)
	leaf2 := parseCert(t, "renewed tls.crt", sec2.Data[corev1.TLSCertKey])
	if leaf2.SerialNumber.Cmp(leaf.SerialNumber) == 0 {
		t.Error("the renewal did not issue a new certificate (same serial number)")
	}
	if k := fingerprint(leaf2.RawSubjectPublicKeyInfo); k != key {
		t.Errorf("the renewal changed the public key from %s to %s under rotationPolicy Never", key, k)
	}
	s.checkRequest(renewed, sec2, key)
	s.wait(time.Minute, fmt.Sprintf("revision %d's CertificateRequest garbage-collected", rev1), func(ctx context.Context) (bool, string, error) {
		_, err := cp.Get(ctx, s.request(fmt.Sprintf("%s-%d", name, rev1)))
		return kerrors.IsNotFound(err), harness.SeenErr(err), nil
	})

	// A deleted Secret is issued again; with no key left to keep, under
	// rotationPolicy Never too, the new one has a new key.
	s.must(cp.Kube.CoreV1().Secrets(s.ns).Delete(ctx, secretName, metav1.DeleteOptions{}))
	reissued := s.waitCertificate(name, rev2)
	checkReadyFor(t, reissued)
	sec3 := s.certSecret(secretName)
	k3 := fingerprint(parseCert(t, "reissued tls.crt", sec3.Data[corev1.TLSCertKey]).RawSubjectPublicKeyInfo)
	if k3 == key {
		t.Error("the Secret was deleted, yet its reissue has the deleted key's public key")
	}
	s.checkRequest(reissued, sec3, k3)
}

// waitCertificate waits until the Certificate has issued a revision after
// the given one and is Ready with no issuance in progress.
func (s *scenario) waitCertificate(name string, after int64) *unstructured.Unstructured {
	s.t.Helper()
	var got *unstructured.Unstructured
	s.wait(certIssueTimeout, fmt.Sprintf("Certificate %s Ready at a revision after %d", name, after), func(ctx context.Context) (bool, string, error) {
		u, err := cp.Get(ctx, s.certificate(name))
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		rev := revisionOf(u)
		ready, issuing := harness.Condition(u, "Ready"), harness.Condition(u, "Issuing")
		got = u
		return rev > after && ready.Status == "True" && issuing.Status == "Unknown",
			fmt.Sprintf("revision %d Ready=%s Issuing=%s", rev, ready, issuing), nil
	})
	return got
}

// revisionOf is a Certificate's status.revision, 0 before its first issue.
func revisionOf(crt *unstructured.Unstructured) int64 {
	rev, _, _ := unstructured.NestedInt64(crt.Object, "status", "revision")
	return rev
}

func (s *scenario) certificate(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(harness.CertificateGVK)
	u.SetNamespace(s.ns)
	u.SetName(name)
	return u
}

func (s *scenario) request(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(harness.CertificateRequestGVK)
	u.SetNamespace(s.ns)
	u.SetName(name)
	return u
}

// certSecret reads the Certificate's Secret, which must hold tls.crt, tls.key
// and ca.crt (a CA issuer fills ca.crt).
func (s *scenario) certSecret(name string) *corev1.Secret {
	s.t.Helper()
	sec, err := cp.Kube.CoreV1().Secrets(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	s.must(err)
	for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, corev1.ServiceAccountRootCAKey} {
		if len(sec.Data[k]) == 0 {
			s.t.Errorf("Secret %s has no %s (keys %v)", name, k, slices.Sorted(maps.Keys(sec.Data)))
		}
	}
	return sec
}

// checkRequest finds the CertificateRequest of the Certificate's current
// revision from the Certificate alone (named <certificate>-<revision>, as
// cert-manager names them) and checks it is the Certificate's, carries the
// Secret's certificate and CA in its status, and a CSR for the public key
// whose fingerprint is key.
func (s *scenario) checkRequest(crt *unstructured.Unstructured, sec *corev1.Secret, key string) {
	s.t.Helper()
	t := s.t
	rev := revisionOf(crt)
	name := fmt.Sprintf("%s-%d", crt.GetName(), rev)
	req, err := cp.Get(s.ctx, s.request(name))
	if err != nil {
		t.Errorf("the CertificateRequest of revision %d: %v", rev, err)
		return
	}
	ann := req.GetAnnotations()
	if ann[annotationCertificateName] != crt.GetName() || ann[annotationRevision] != strconv.FormatInt(rev, 10) {
		t.Errorf("CertificateRequest %s annotations %s=%q %s=%q, want %q and %d", name,
			annotationCertificateName, ann[annotationCertificateName], annotationRevision, ann[annotationRevision], crt.GetName(), rev)
	}
	if ref := metav1.GetControllerOf(req); ref == nil || ref.UID != crt.GetUID() || ref.Kind != harness.CertificateGVK.Kind {
		t.Errorf("CertificateRequest %s is controlled by %+v, not Certificate %s (%s)", name, ref, crt.GetName(), crt.GetUID())
	}
	if !maps.Equal(req.GetLabels(), crt.GetLabels()) {
		t.Errorf("CertificateRequest %s labels %v, want the Certificate's %v", name, req.GetLabels(), crt.GetLabels())
	}
	if c := harness.Condition(req, "Ready"); c.Status != "True" || c.Reason != "Issued" {
		t.Errorf("CertificateRequest %s Ready=%s, want True/Issued", name, c)
	}
	if c := harness.Condition(req, "Approved"); c.Status != "True" {
		t.Errorf("CertificateRequest %s Approved=%s: cert-manager's approver did not approve it", name, c)
	}
	if got := bytesField(t, req, "status", "certificate"); !bytes.Equal(got, sec.Data[corev1.TLSCertKey]) {
		t.Errorf("CertificateRequest %s status.certificate is not the Secret's tls.crt", name)
	}
	if got := bytesField(t, req, "status", "ca"); !bytes.Equal(got, sec.Data[corev1.ServiceAccountRootCAKey]) {
		t.Errorf("CertificateRequest %s status.ca is not the Secret's ca.crt", name)
	}
	block, _ := pem.Decode(bytesField(t, req, "spec", "request"))
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		t.Errorf("CertificateRequest %s spec.request is not a PEM CSR", name)
		return
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Errorf("CertificateRequest %s spec.request: %v", name, err)
		return
	}
	if k := fingerprint(csr.RawSubjectPublicKeyInfo); k != key {
		t.Errorf("CertificateRequest %s asks for public key %s, the Secret holds %s", name, k, key)
	}
}

// setIssuing adds Issuing=True to the Certificate's status, as cmctl renew
// does, retrying on a conflict with cert-manager's own status writes.
func (s *scenario) setIssuing(name string) {
	s.t.Helper()
	ri, err := cp.Resource(harness.CertificateGVK, s.ns)
	s.must(err)
	s.wait(30*time.Second, "Issuing=True set on Certificate "+name, func(ctx context.Context) (bool, string, error) {
		u, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		conds = append(conds, map[string]any{
			"type": "Issuing", "status": "True", "reason": "ManuallyTriggered", "message": "renewal triggered by the e2e test",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339), "observedGeneration": u.GetGeneration(),
		})
		if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
			return false, "", err
		}
		_, err = ri.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: harness.FieldManager})
		if kerrors.IsConflict(err) {
			return false, harness.SeenErr(err), nil
		}
		return err == nil, "", err
	})
}

// checkReadyFor checks the Ready condition describes the Certificate's
// current generation.
func checkReadyFor(t *testing.T, crt *unstructured.Unstructured) {
	t.Helper()
	conds, _, _ := unstructured.NestedSlice(crt.Object, "status", "conditions")
	for _, raw := range conds {
		c, _ := raw.(map[string]any)
		if c["type"] != "Ready" {
			continue
		}
		og, _, _ := unstructured.NestedInt64(c, "observedGeneration")
		if c["status"] != "True" || og != crt.GetGeneration() {
			t.Errorf("Certificate %s Ready=%v with observedGeneration %d, want True for generation %d", crt.GetName(), c["status"], og, crt.GetGeneration())
		}
		return
	}
	t.Errorf("Certificate %s has no Ready condition", crt.GetName())
}

// checkTimes checks the status times: notBefore and notAfter are the
// certificate's, and with renewBefore unset renewalTime is two thirds
// through its lifetime, truncated to the second.
func checkTimes(t *testing.T, crt *unstructured.Unstructured) {
	t.Helper()
	at := func(field string) time.Time {
		s, _, _ := unstructured.NestedString(crt.Object, "status", field)
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Errorf("status.%s = %q: %v", field, s, err)
		}
		return v
	}
	nb, na, rt := at("notBefore"), at("notAfter"), at("renewalTime")
	if d := na.Sub(nb); d != 8760*time.Hour {
		t.Errorf("notAfter - notBefore = %s, want the requested 8760h", d)
	}
	if want := na.Add(-na.Sub(nb) / 3).Truncate(time.Second); !rt.Equal(want) {
		t.Errorf("renewalTime %s, want %s (two thirds through the lifetime)", rt, want)
	}
}

func bytesField(t *testing.T, u *unstructured.Unstructured, path ...string) []byte {
	t.Helper()
	s, _, _ := unstructured.NestedString(u.Object, path...)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Errorf("%s: %v", strings.Join(path, "."), err)
	}
	return b
}

func parseCert(t *testing.T, what string, pemBytes []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("%s is not a PEM certificate", what)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return c
}

// keyFingerprint is the fingerprint of a PKCS#8 private key's public key.
func keyFingerprint(t *testing.T, pemBytes []byte) string {
	t.Helper()
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		t.Fatal("tls.key is not PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatalf("tls.key: %v", err)
	}
	signer, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("tls.key is a %T, want ECDSA", k)
	}
	der, err := x509.MarshalPKIXPublicKey(signer.Public())
	if err != nil {
		t.Fatal(err)
	}
	return fingerprint(der)
}

// fingerprint is the SHA-256 of a DER SubjectPublicKeyInfo, in hex.
func fingerprint(spki []byte) string {
	sum := sha256.Sum256(spki)
	return hex.EncodeToString(sum[:])
}
