package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// TestRenderCertificate: a generation's Certificate has the original's
// name, SANs, usages, key policy and durations, and the labels the
// instance and the engine find it and its CertificateRequests by.
func TestRenderCertificate(t *testing.T) {
	r := renderInput{Engine: "demo", Namespace: "analytics", Gen: 7}
	for name, tc := range map[string]struct {
		issuer      v1alpha1.CertManagerSpec
		alg         string
		size        int64
		issuerKind  string
		duration    string
		renewBefore any
	}{
		"Defaults": {
			issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca"}},
			alg:    "ECDSA", size: 384, issuerKind: "ClusterIssuer", duration: "2160h0m0s", renewBefore: "720h0m0s",
		},
		"RSAFromAnIssuer": {
			issuer: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca", Kind: "Issuer"}, Algorithm: "RSA", Size: 4096},
			alg:    "RSA", size: 4096, issuerKind: "Issuer", duration: "2160h0m0s", renewBefore: "720h0m0s",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := renderCertificate(r, TLS{Instance: "firebolt", Issuer: tc.issuer})
			labels := map[string]any{
				"firebolt.io/instance": "firebolt", "firebolt.io/component": "engine-tls",
				"firebolt.io/engine": "demo", "firebolt.io/generation": "7",
			}
			want := map[string]any{
				"apiVersion": "cert-manager.io/v1",
				"kind":       "Certificate",
				"metadata":   map[string]any{"name": "demo-g7-engine-tls", "namespace": "analytics", "labels": labels},
				"spec": map[string]any{
					"secretName": "demo-g7-engine-tls",
					"dnsNames": []any{
						"*.demo-g7-hl.analytics.svc.cluster.local",
						"demo-service.analytics.svc.cluster.local",
						"localhost",
					},
					"usages":         []any{"server auth"},
					"privateKey":     map[string]any{"rotationPolicy": "Always", "encoding": "PKCS8", "algorithm": tc.alg, "size": tc.size},
					"duration":       tc.duration,
					"renewBefore":    tc.renewBefore,
					"issuerRef":      map[string]any{"name": "internal-ca", "kind": tc.issuerKind, "group": "cert-manager.io"},
					"secretTemplate": map[string]any{"labels": labels},
				},
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("renderCertificate() (-want +got):\n%s", d)
			}
		})
	}
}
