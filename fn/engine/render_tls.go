package engine

import (
	"strconv"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/certmanager"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Engine TLS certificates, as the original issues them: one per
// generation, 90 days long, renewed 30 days early, for server auth, with a
// new key at every issue.
const (
	engineTLSDuration    = 90 * 24 * time.Hour
	engineTLSRenewBefore = 30 * 24 * time.Hour
	// ComponentEngineTLS is the component label of a generation's
	// Certificate and Secret; cert-manager copies the Certificate's labels
	// onto its CertificateRequests, which are found by them.
	ComponentEngineTLS = "engine-tls"
	// Defaults of spec.tls.engine.certManager, as the schema's.
	defaultTLSAlgorithm = "ECDSA"
	defaultTLSSize      = 384
)

// TLS is the instance's engine TLS as a generation renders it: the
// instance (a label of the Certificate, so the instance finds its engines'
// certificates) and the issuer that signs each generation's certificate.
type TLS struct {
	Instance string
	Issuer   v1alpha1.CertManagerSpec
}

// engineTLSName names generation gen's Certificate and its Secret,
// <engine>-g<N>-engine-tls, the shape podtemplate.IsEngineTLSSecretName
// keeps out of user templates.
func engineTLSName(engine string, gen int) string {
	return statefulSetName(engine, gen) + "-engine-tls"
}

// renderCertificate is generation r.Gen's Certificate: the names a client
// reaches its pods by (each pod under the generation's headless Service,
// the routing Service, and localhost for the pod's own sidecars).
func renderCertificate(r renderInput, tls TLS) map[string]any {
	host := func(svc string) string { return svc + "." + r.Namespace + ".svc." + contract.ClusterDomain }
	alg, size := tls.Issuer.Algorithm, int64(tls.Issuer.Size)
	if alg == "" {
		alg = defaultTLSAlgorithm
	}
	if size == 0 {
		size = defaultTLSSize
	}
	return certmanager.Certificate(certmanager.Spec{
		Name:      engineTLSName(r.Engine, r.Gen),
		Namespace: r.Namespace,
		Labels: map[string]string{
			contract.LabelInstanceRef: tls.Instance,
			contract.LabelComponent:   ComponentEngineTLS,
			LabelEngine:               r.Engine,
			LabelGeneration:           strconv.Itoa(r.Gen),
		},
		Issuer:      tls.Issuer,
		Duration:    engineTLSDuration,
		RenewBefore: engineTLSRenewBefore,
		Extra: map[string]any{
			"dnsNames": []any{"*." + host(headlessName(r.Engine, r.Gen)), host(routingServiceName(r.Engine)), "localhost"},
			"usages":   []any{"server auth"},
			"privateKey": map[string]any{
				"rotationPolicy": "Always", "encoding": "PKCS8", "algorithm": alg, "size": size,
			},
		},
	}).Object
}
