package instance_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"pgregory.net/rapid"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance/envoyconfig"
	"github.com/firebolt-db/firebolt-crossplane/fn/instancestate"
)

// engineIssuer is spec.tls.engine.certManager with the fields admission
// defaults spelled out.
const engineIssuer = `{issuerRef: {name: internal-ca, kind: ClusterIssuer}, algorithm: ECDSA, size: 384}`

// engineTLSSpec asks for engine TLS; extra is added to spec.tls.engine.
func engineTLSSpec(extra string) string {
	return `{metadata: {}, gateway: {}, tls: {engine: {enabled: true, certManager: ` + engineIssuer + extra + `}}}`
}

// engineTLSOffSpec keeps spec.tls.engine with enabled false.
const engineTLSOffSpec = `{metadata: {}, gateway: {}, tls: {engine: {enabled: false, certManager: ` + engineIssuer + `}}}`

// provisioning is the composite's status before the call: nothing to
// announce when it stays Provisioning.
const provisioning = `{phase: Provisioning, id: ` + derivedID + `}`

// anchorCreatedAt is when an earlier call recorded engine TLS.
const anchorCreatedAt = "2026-08-01T10:05:00Z"

// testCA is a CA certificate as cert-manager puts it in status.ca, and its
// fingerprint: the hex SHA-256 of the trimmed PEM.
type testCA struct {
	pem, fp string
}

// engineCAs are four CAs, sorted by fingerprint, and a leaf certificate
// signed by the first; made once, key generation is slow.
var engineCAs = sync.OnceValues(func() ([]testCA, string) {
	cas := make([]testCA, 0, 4)
	var leaf string
	for i := range 4 {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: "engine-ca"},
			NotBefore: authNow.Add(-time.Hour), NotAfter: authNow.Add(10 * 365 * 24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		p := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		cas = append(cas, testCA{pem: p, fp: fingerprint(p)})
		if i == 0 {
			l := &x509.Certificate{
				SerialNumber: big.NewInt(99), Subject: pkix.Name{CommonName: "demo-engine-tls-anchor"},
				DNSNames:  []string{"demo-engine-tls-anchor.firebolt.svc.cluster.local"},
				NotBefore: authNow.Add(-time.Hour), NotAfter: authNow.Add(90 * 24 * time.Hour),
				KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			}
			lder, err := x509.CreateCertificate(rand.Reader, l, tmpl, &key.PublicKey, key)
			if err != nil {
				panic(err)
			}
			leaf = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: lder}))
		}
	}
	slices.SortFunc(cas, func(a, b testCA) int { return strings.Compare(a.fp, b.fp) })
	return cas, leaf
})

func fingerprint(p string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(p)))
	return hex.EncodeToString(sum[:])
}

// bundleOf is the engine CA bundle's ca.crt holding cas (each once, sorted
// by fingerprint, newline-terminated) and its fingerprints.
func bundleOf(cas ...testCA) (string, []string) {
	d := slices.Clone(cas)
	slices.SortFunc(d, func(a, b testCA) int { return strings.Compare(a.fp, b.fp) })
	d = slices.CompactFunc(d, func(a, b testCA) bool { return a.fp == b.fp })
	pems, fps := make([]string, len(d)), make([]string, len(d))
	for i, ca := range d {
		pems[i], fps[i] = strings.TrimSpace(ca.pem), ca.fp
	}
	return strings.Join(pems, "\n") + "\n", fps
}

func fpsOf(cas ...testCA) []any {
	_, fps := bundleOf(cas...)
	out := make([]any, len(fps))
	for i, fp := range fps {
		out[i] = fp
	}
	return out
}

// wantEngineTLSAnchor is the anchor Certificate, as the original's.
func wantEngineTLSAnchor(t *testing.T) obj {
	return parse(t, `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: demo-engine-tls
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: engine-tls}
spec:
  secretName: demo-engine-tls
  dnsNames: [demo-engine-tls-anchor.firebolt.svc.cluster.local]
  usages: [server auth]
  duration: 2160h0m0s
  renewBefore: 720h0m0s
  issuerRef: {name: internal-ca, kind: ClusterIssuer, group: cert-manager.io}
  privateKey: {rotationPolicy: Always, encoding: PKCS8, algorithm: ECDSA, size: 384}
  secretTemplate:
    labels: {firebolt.io/instance: demo, firebolt.io/component: engine-tls}
`)
}

// issuedAt is a Certificate cert-manager has issued at revision rev.
func issuedAt(t *testing.T, c obj, rev int) obj {
	return issued(t, c).with(t, "status.revision", rev)
}

// certRequest is a CertificateRequest cert-manager made for one of the
// instance's engine TLS Certificates, with status.ca ca ("" for none).
func certRequest(t *testing.T, name, ca string) obj {
	o := parse(t, `
apiVersion: cert-manager.io/v1
kind: CertificateRequest
metadata:
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: engine-tls}
status:
  conditions: [{type: Ready, status: "True", reason: Issued}]
`).with(t, "metadata.name", name)
	if ca != "" {
		o = o.with(t, "status.ca", b64(ca))
	}
	return o
}

// routed is an engine's routing Service publishing route ("" for none).
func routed(t *testing.T, engine, route string) obj {
	o := routing(t, engine, "")
	if route != "" {
		o = o.with(t, "metadata.annotations", map[string]any{"firebolt.io/gateway-route": route})
	}
	return o
}

// reencryptingSince is status.engineTLS re-encrypting, recorded at
// createdAt.
func reencryptingSince(createdAt string) map[string]any {
	return map[string]any{"secretName": "demo-engine-tls", "createdAt": createdAt, "reencrypting": true, "issuerRef": provenIssuer()}
}

// engineStateOf is what the engine-state ConfigMap of rsp publishes.
func engineStateOf(t *testing.T, rsp *fnv1.RunFunctionResponse) instancestate.State {
	t.Helper()
	cm := rsp.GetDesired().GetResources()[string(instance.RNEngineState)]
	if cm == nil {
		t.Fatal("no engine-state ConfigMap is composed")
	}
	data := map[string]string{}
	for k, v := range cm.GetResource().GetFields()["data"].GetStructValue().GetFields() {
		data[k] = v.GetStringValue()
	}
	st, problem := instancestate.Decode(data)
	if problem != "" {
		t.Fatalf("the engine-state ConfigMap cannot be read: %s", problem)
	}
	return st
}

func engineTLSRequirements() map[string]*fnv1.ResourceSelector {
	ns := namespace
	return map[string]*fnv1.ResourceSelector{
		"auth-engines": enginesSelector(),
		"engine-tls-requests": {ApiVersion: "cert-manager.io/v1", Kind: "CertificateRequest", Namespace: &ns,
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
				"firebolt.io/instance": "demo", "firebolt.io/component": "engine-tls"}}}},
	}
}

// bundleHash names the bundle of cas after its content: the first 10 hex
// of the config-hash rule (SHA-256 over length-prefixed parts) over its
// ca.crt alone.
func bundleHash(cas ...testCA) string {
	data, _ := bundleOf(cas...)
	return configHash(data)[:10]
}

// bundleRN and bundleName are the composition resource and the ConfigMap
// of the bundle of cas.
func bundleRN(cas ...testCA) string   { return "engine-ca-bundle-" + bundleHash(cas...) }
func bundleName(cas ...testCA) string { return "demo-engine-ca-bundle-" + bundleHash(cas...) }

// wantEngineCABundle is the ConfigMap the gateway mounts its engine CAs
// from: immutable, named after its content.
func wantEngineCABundle(t *testing.T, cas ...testCA) obj {
	data, fps := bundleOf(cas...)
	return parse(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: engine-ca-bundle}
immutable: true
`).with(t, "metadata.name", bundleName(cas...),
		"metadata.annotations", map[string]any{"firebolt.io/engine-trust-cas": strings.Join(fps, ",")},
		"data", map[string]any{"ca.crt": data})
}

// withBundle is the bundle of cas as this call renders it, by its
// composition resource name.
func withBundle(t *testing.T, cas ...testCA) map[string]obj {
	return map[string]obj{bundleRN(cas...): wantEngineCABundle(t, cas...)}
}

// keptBundle is the observed bundle of cas returned unchanged.
func keptBundle(t *testing.T, cas ...testCA) map[string]obj {
	return map[string]obj{bundleRN(cas...): kept(t, wantEngineCABundle(t, cas...))}
}

// engineGateway is the default gateway reaching engines by up; with cas it
// mounts their bundle (and the CRL Secret crl, if any), and its config
// hash covers them.
func engineGateway(t *testing.T, up envoyconfig.Upstream, crl string, cas ...testCA) map[string]obj {
	t.Helper()
	files, err := envoyconfig.Files(envoyconfig.Params{Namespace: namespace, WakeAgent: true, Upstream: up})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("a gateway without listener TLS has files %v, want envoy.yaml alone", envoyconfig.FileKeys(files))
	}
	envoy := files["envoy.yaml"]
	g := wantGateway(t)
	g["gateway-config"] = wantGatewayConfigMap(t, envoy)
	parts := []string{envoy}
	if len(cas) > 0 {
		data, _ := bundleOf(cas...)
		parts = append(parts, "engine-ca", data, crl)
	}
	d := wantGatewayDeployment(t, envoy).with(t, "spec.template.metadata.annotations", map[string]any{"firebolt.io/config-hash": configHash(parts...)})
	if len(cas) > 0 {
		vols := []any{parse(t, `{name: engine-ca, configMap: {name: `+bundleName(cas...)+`, items: [{key: ca.crt, path: ca.crt}]}}`)}
		mounts := []any{parse(t, `{name: engine-ca, mountPath: /etc/envoy-tls/engine-ca, readOnly: true}`)}
		if crl != "" {
			vols = append(vols, parse(t, `{name: engine-crl, secret: {secretName: `+crl+`, items: [{key: crl.pem, path: crl.pem}]}}`))
			mounts = append(mounts, parse(t, `{name: engine-crl, mountPath: /etc/envoy-tls/engine-crl, readOnly: true}`))
		}
		spec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		spec["volumes"] = slices.Insert(spec["volumes"].([]any), 2, vols...)
		c := spec["containers"].([]any)[0].(map[string]any)
		c["volumeMounts"] = append(c["volumeMounts"].([]any), mounts...)
	}
	g["gateway"] = d
	return g
}

// kept is an observed object as a frozen component returns it: the
// function's metadata and the spec, no status.
func kept(t *testing.T, o obj) obj {
	c := o.with(t)
	delete(c, "status")
	md := c["metadata"].(map[string]any)
	for k := range md {
		if !slices.Contains([]string{"name", "namespace", "labels", "annotations"}, k) {
			delete(md, k)
		}
	}
	return c
}

// gatewayNames are the gateway's composition resource names.
var gatewayNames = []string{"gateway-config", "gateway", "gateway-service", "gateway-pdb", "gateway-serviceaccount", "gateway-role", "gateway-rolebinding"}

// engineTLSCase is one whole-response case; check, if any, asserts more
// of the response (or, without want, what the case asserts).
type engineTLSCase struct {
	reason string
	req    func(t *testing.T) request
	want   func(t *testing.T) want
	check  func(t *testing.T, rsp *fnv1.RunFunctionResponse)
}

func TestRunFunctionEngineTLS(t *testing.T) {
	cas, leaf := engineCAs()
	base := func(t *testing.T) map[string]obj {
		return merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID))
	}
	now := authNow.Format(time.RFC3339)
	reencrypting := reencryptingSince
	long63, long56 := "e"+strings.Repeat("x", 62), "e"+strings.Repeat("y", 55)
	pendingMsg := "waiting for cert-manager to issue Certificate demo-engine-tls from ClusterIssuer internal-ca, with a CA (status.ca of its CertificateRequest): engines roll to TLS once it is; the issuer must be CA-backed"
	tlsDefault := envoyconfig.Upstream{TLS: true}
	notReady := func(res map[string]obj, names ...string) map[string]bool {
		r := allReady(keys(res)...)
		for _, n := range names {
			r[n] = false
		}
		return r
	}
	// running is an instance whose gateway every pod runs with upstream
	// up and the bundle of cas, its anchor issued.
	running := func(t *testing.T, up envoyconfig.Upstream, crl string, cas ...testCA) map[string]obj {
		o := observedRunning(t)
		g := engineGateway(t, up, crl, cas...)
		for _, n := range gatewayNames {
			o[n] = g[n]
		}
		o["gateway"] = rolledOut(t, g["gateway"])
		o[bundleRN(cas...)] = wantEngineCABundle(t, cas...)
		o["engine-tls-anchor"] = issued(t, wantEngineTLSAnchor(t))
		return o
	}
	withEngineTLS := func(t *testing.T, x obj, engineTLS map[string]any, trust []any, upstream map[string]any) obj {
		kv := []any{"status.engineTLS", engineTLS, "status.rolledEngineTrustCAs", trust, "status.rolledEngineUpstream", upstream}
		var set []any
		for i := 0; i < len(kv); i += 2 {
			if !isNil(kv[i+1]) {
				set = append(set, kv[i], kv[i+1])
			}
		}
		return x.with(t, set...)
	}

	cases := map[string]engineTLSCase{
		"NotConfigured": {
			reason: "No spec.tls.engine and nothing recorded: nothing of engine TLS is required or composed, and EngineTLSReady is Disabled.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, defaultSpec, readyStatus), observed: observedRunning(t)}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t))
				return want{
					status:     status("Ready", derivedID, true, true),
					ready:      true,
					resources:  res,
					readyRes:   allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("EngineTLSReady", true, "Disabled", "engine TLS is not configured")),
					ttl:        stableTTL,
				}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				for _, n := range []string{"engine-tls-requests", "auth-engines"} {
					if _, ok := rsp.GetRequirements().GetResources()[n]; ok {
						t.Errorf("engine TLS not configured: requirement %q asked for", n)
					}
				}
			},
		},
		"AnchorPending": {
			reason: "Engine TLS enabled, the anchor not issued: the anchor is composed, engines and engine CertificateRequests are required, nothing is recorded, and the gateway keeps reaching engines over plain HTTP with no bundle.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, engineTLSSpec(""), provisioning), observed: observedRunning(t),
					required: map[string][]obj{"auth-engines": {routed(t, "e1", "")}, "engine-tls-requests": nil}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t), map[string]obj{"engine-tls-anchor": wantEngineTLSAnchor(t)})
				return want{
					status:       status("Provisioning", derivedID, true, true),
					resources:    res,
					readyRes:     notReady(res, "engine-tls-anchor"),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "CertificatePending", pendingMsg)),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"AnchorObservedNotIssued": {
			reason: "The anchor exists but cert-manager has not issued it, no engine listed: still CertificatePending, the gateway unchanged.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["engine-tls-anchor"] = wantEngineTLSAnchor(t)
				return request{xr: xr(t, engineTLSSpec(""), provisioning), observed: o,
					required: map[string][]obj{"auth-engines": nil, "engine-tls-requests": nil}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t), map[string]obj{"engine-tls-anchor": wantEngineTLSAnchor(t)})
				return want{
					status:       status("Provisioning", derivedID, true, true),
					resources:    res,
					readyRes:     notReady(res, "engine-tls-anchor"),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "CertificatePending", pendingMsg)),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"AnchorIssuedStartsReencrypting": {
			reason: "The anchor is issued under a CA: engine TLS is recorded, the gateway defaults to TLS (e2, which publishes nothing, keeps a plain route), mounts the bundle of every engine CA and hashes it; nothing is confirmed rolled yet.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["engine-tls-anchor"] = issued(t, wantEngineTLSAnchor(t))
				return request{xr: xr(t, engineTLSSpec(""), provisioning), observed: o, required: map[string][]obj{
					"auth-engines":        {routed(t, "e1", "e1-service;tls"), routed(t, "e2", "")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[1].pem)},
				}}
			},
			want: func(t *testing.T) want {
				up := envoyconfig.Upstream{TLS: true, Routes: []envoyconfig.EngineRoute{{Engine: "e2", Service: "e2-service"}}}
				res := merge(base(t), engineGateway(t, up, "", cas[0], cas[1]), withBundle(t, cas[0], cas[1]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status:       status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(now)),
					resources:    res,
					readyRes:     notReady(res, bundleRN(cas[0], cas[1])),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "Converging", "waiting for 1 engine(s) (e2) to serve TLS")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"RolledOncePodsRunIt": {
			reason: "Every gateway pod runs the rendered hash: what it was rendered with is published as rolled; createdAt is kept; e2 still lags.",
			req: func(t *testing.T) request {
				up := envoyconfig.Upstream{TLS: true, Routes: []envoyconfig.EngineRoute{{Engine: "e2", Service: "e2-service"}}}
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), nil, nil)
				return request{xr: x, observed: running(t, up, "", cas[0], cas[1]), required: map[string][]obj{
					"auth-engines":        {routed(t, "e1", "e1-service;tls"), routed(t, "e2", "")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[1].pem)},
				}}
			},
			want: func(t *testing.T) want {
				up := envoyconfig.Upstream{TLS: true, Routes: []envoyconfig.EngineRoute{{Engine: "e2", Service: "e2-service"}}}
				res := merge(base(t), engineGateway(t, up, "", cas[0], cas[1]), withBundle(t, cas[0], cas[1]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status: status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0], cas[1]),
						"rolledEngineUpstream", map[string]any{"tls": true, "routes": []any{map[string]any{"engine": "e2", "service": "e2-service"}}}),
					resources:    res,
					readyRes:     allReady(keys(res)...),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "Converging", "waiting for 1 engine(s) (e2) to serve TLS")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"ConvergingUntilPodsRunIt": {
			reason: "Every engine serves TLS but the gateway pods run an older configuration: rolled stays as it was (no CA of it dropped from the bundle), Converging.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), fpsOf(cas[0]), map[string]any{"tls": true})
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0]), required: map[string][]obj{
					"auth-engines":        {routed(t, "e1", "e1-service;tls"), routed(t, "e2", "e2-service;tls")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e2-g1-engine-tls-1", cas[2].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), engineGateway(t, tlsDefault, "", cas[0], cas[2]), withBundle(t, cas[0], cas[2]), keptBundle(t, cas[0]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status: status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0]), "rolledEngineUpstream", map[string]any{"tls": true}),
					resources: res,
					readyRes:  notReady(res, bundleRN(cas[0], cas[2])),
					conditions: append(conditionsReady(), cond("EngineTLSReady", false, "Converging",
						"waiting for every gateway pod to reach engines over TLS, trusting the CAs of every live engine generation")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"ReadyOnceEveryEngineServesTLS": {
			reason: "Every listed engine publishes <e>-service;tls and every pod runs the TLS default with their CAs: EngineTLSReady True, the instance Ready.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), nil, nil)
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0], cas[1]), required: map[string][]obj{
					"auth-engines":        {routed(t, "e1", "e1-service;tls"), routed(t, "e2", "e2-service;tls")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[1].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), engineGateway(t, tlsDefault, "", cas[0], cas[1]), withBundle(t, cas[0], cas[1]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status: status("Ready", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0], cas[1]), "rolledEngineUpstream", map[string]any{"tls": true}),
					ready:     true,
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("EngineTLSReady", true, "Ready",
						"every engine serves TLS and every gateway pod verifies it against 2 CA(s)")),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_NORMAL, "Ready",
						"FireboltInstance is Ready: metadata service at "+metadataEndpoint+", gateway at "+gatewayEndpoint)},
					ttl:          stableTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"RoutesAreWhatDiffersFromTheTLSDefault": {
			reason: "Under the TLS default: a switching engine is reached by a-next over TLS, one on TLS needs no route, one publishing nothing or something not its own (other-service;tls, x;y) is reached plain at its routing Service.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), nil, nil)
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0]), required: map[string][]obj{
					"auth-engines": {routed(t, "a", "a-next;tls"), routed(t, "b", "b-service;tls"), routed(t, "c", ""),
						routed(t, "d", "other-service;tls"), routed(t, "e", "x;y")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem)},
				}}
			},
			want: func(t *testing.T) want {
				up := envoyconfig.Upstream{TLS: true, Routes: []envoyconfig.EngineRoute{
					{Engine: "a", Service: "a-next", TLS: true}, {Engine: "c", Service: "c-service"},
					{Engine: "d", Service: "d-service"}, {Engine: "e", Service: "e-service"},
				}}
				res := merge(base(t), engineGateway(t, up, "", cas[0]), withBundle(t, cas[0]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status:       status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt)),
					resources:    res,
					readyRes:     allReady(keys(res)...),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "Converging", "waiting for 4 engine(s) (a, c, d, e) to serve TLS")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"RoutesAreWhatDiffersFromThePlainDefault": {
			reason: "Anchor not issued, so the default stays plain: engines publishing TLS (a by a-next, b at its routing Service) get routes and the bundle of the listed CAs is mounted; hostile annotations get nothing.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, engineTLSSpec(""), provisioning), observed: observedRunning(t), required: map[string][]obj{
					"auth-engines": {routed(t, "a", "a-next;tls"), routed(t, "b", "b-service;tls"), routed(t, "c", ""),
						routed(t, "d", "other-service;tls"), routed(t, "e", "x;y")},
					"engine-tls-requests": {certRequest(t, "b-g1-engine-tls-1", cas[1].pem)},
				}}
			},
			want: func(t *testing.T) want {
				up := envoyconfig.Upstream{Routes: []envoyconfig.EngineRoute{
					{Engine: "a", Service: "a-next", TLS: true}, {Engine: "b", Service: "b-service", TLS: true},
				}}
				res := merge(base(t), engineGateway(t, up, "", cas[1]), withBundle(t, cas[1]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status:       status("Provisioning", derivedID, true, true),
					resources:    res,
					readyRes:     notReady(res, "engine-tls-anchor", bundleRN(cas[1])),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "CertificatePending", pendingMsg)),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"AnchorUnderALeafIsNotCABacked": {
			reason: "The anchor's CertificateRequest carries a status.ca that is not a CA: nothing is recorded, no bundle, CertificatePending.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["engine-tls-anchor"] = issued(t, wantEngineTLSAnchor(t))
				return request{xr: xr(t, engineTLSSpec(""), provisioning), observed: o, required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "")}, "engine-tls-requests": {certRequest(t, "demo-engine-tls-1", leaf)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t), map[string]obj{"engine-tls-anchor": wantEngineTLSAnchor(t)})
				return want{
					status:       status("Provisioning", derivedID, true, true),
					resources:    res,
					readyRes:     allReady(keys(res)...),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "CertificatePending", pendingMsg)),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"AnchorWithoutCAIsNotCABacked": {
			reason: "The anchor's CertificateRequest has no status.ca: CertificatePending.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["engine-tls-anchor"] = issued(t, wantEngineTLSAnchor(t))
				return request{xr: xr(t, engineTLSSpec(""), provisioning), observed: o, required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "")}, "engine-tls-requests": {certRequest(t, "demo-engine-tls-1", "")},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t), map[string]obj{"engine-tls-anchor": wantEngineTLSAnchor(t)})
				return want{
					status:       status("Provisioning", derivedID, true, true),
					resources:    res,
					readyRes:     allReady(keys(res)...),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "CertificatePending", pendingMsg)),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"OnlyTheCurrentRevisionCounts": {
			reason: "The anchor is at revision 2 and only revision 1's request (with a CA) is listed: the current issue is not shown CA-backed, CertificatePending; the listed CA is not mounted, as no engine uses TLS.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["engine-tls-anchor"] = issuedAt(t, wantEngineTLSAnchor(t), 2)
				return request{xr: xr(t, engineTLSSpec(""), provisioning), observed: o, required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "")}, "engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t), map[string]obj{"engine-tls-anchor": wantEngineTLSAnchor(t)})
				return want{
					status:       status("Provisioning", derivedID, true, true),
					resources:    res,
					readyRes:     allReady(keys(res)...),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "CertificatePending", pendingMsg)),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"FrozenWhileDrainingUnlisted": {
			reason: "Engine TLS off with a recorded anchor, and Crossplane has not listed the engines and CertificateRequests yet: the gateway and its bundle are returned as observed, status.engineTLS and what is rolled are kept.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSOffSpec, provisioning),
					map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt}, fpsOf(cas[0]), map[string]any{"tls": true})
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0])}
			},
			want: func(t *testing.T) want {
				o := running(t, tlsDefault, "", cas[0])
				res := base(t)
				for _, n := range append(slices.Clone(gatewayNames), bundleRN(cas[0])) {
					res[n] = kept(t, o[n])
				}
				return want{
					status: status("Provisioning", derivedID, true, true).with(t,
						"engineTLS", map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt},
						"rolledEngineTrustCAs", fpsOf(cas[0]), "rolledEngineUpstream", map[string]any{"tls": true}),
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: []*fnv1.Condition{
						conditionsReady()[0],
						cond("GatewayReady", false, "Provisioning", "the gateway keeps its configuration: waiting for Crossplane to list the instance's engines and their CertificateRequests"),
						cond("EngineTLSReady", false, "Draining", "engine TLS is disabled: waiting for no engine and every gateway pod to reach engines over plain HTTP"),
					},
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"DrainingKeepsTheBundle": {
			reason: "Engine TLS disabled while e1 still serves TLS and e2 switches back through e2-next: status.engineTLS is kept (not reencrypting), the default is plain with a route for each, the bundle stays mounted; the anchor is no longer composed; Draining names them.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSOffSpec, provisioning), reencrypting(anchorCreatedAt), fpsOf(cas[0], cas[1]), map[string]any{"tls": true})
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0], cas[1]), required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "e1-service;tls"), routed(t, "e2", "e2-next;plain"), routed(t, "e3", "")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[1].pem),
						certRequest(t, "e2-g1-engine-tls-1", cas[2].pem)},
				}}
			},
			want: func(t *testing.T) want {
				up := envoyconfig.Upstream{Routes: []envoyconfig.EngineRoute{
					{Engine: "e1", Service: "e1-service", TLS: true}, {Engine: "e2", Service: "e2-next"},
				}}
				// The bundle pods still mount is kept beside the new one.
				res := merge(base(t), engineGateway(t, up, "", cas[0], cas[1], cas[2]), withBundle(t, cas[0], cas[1], cas[2]), keptBundle(t, cas[0], cas[1]))
				return want{
					status: status("Provisioning", derivedID, true, true).with(t,
						"engineTLS", map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt},
						"rolledEngineTrustCAs", fpsOf(cas[0], cas[1]), "rolledEngineUpstream", map[string]any{"tls": true}),
					resources: res,
					readyRes:  notReady(res, bundleRN(cas[0], cas[1], cas[2])),
					conditions: append(conditionsReady(), cond("EngineTLSReady", false, "Draining",
						"engine TLS is disabled: waiting for 2 engine(s) (e1, e2) and every gateway pod to reach engines over plain HTTP")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"DisabledOnceEveryEngineIsPlain": {
			reason: "Engine TLS disabled, no engine publishes TLS and every pod reaches engines plain: status.engineTLS is dropped, no bundle, Disabled.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSOffSpec, provisioning), map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt}, nil, nil)
				return request{xr: x, observed: observedRunning(t), required: map[string][]obj{
					"auth-engines":        {routed(t, "e1", "e1-service;plain"), routed(t, "e2", "")},
					"engine-tls-requests": {certRequest(t, "e1-g1-engine-tls-1", cas[1].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t))
				return want{
					status:       status("Ready", derivedID, true, true),
					ready:        true,
					resources:    res,
					readyRes:     allReady(keys(res)...),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", true, "Disabled", "engines serve plain HTTP")),
					results:      []*fnv1.Result{result(fnv1.Severity_SEVERITY_NORMAL, "Ready", "FireboltInstance is Ready: metadata service at "+metadataEndpoint+", gateway at "+gatewayEndpoint)},
					ttl:          stableTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"CRLSecretRefUpstream": {
			reason: "A CRL of the user's: upstream TLS checks it, the gateway mounts crl.pem of the Secret beside the bundle and hashes its name.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(", crlSecretRef: {name: engine-crl}"), provisioning), reencrypting(anchorCreatedAt), nil, nil)
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0]), required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "e1-service;tls")}, "engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), engineGateway(t, envoyconfig.Upstream{TLS: true, CRL: true}, "engine-crl", cas[0]), withBundle(t, cas[0]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status:    status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt)),
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("EngineTLSReady", false, "Converging",
						"waiting for every gateway pod to reach engines over TLS, trusting the CAs of every live engine generation")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"RolledTrustIsTheIntersection": {
			reason: "Pods confirmed to trust {A, B}; the bundle rendered holds {B, C} and no pod runs it yet: only B is trusted by every pod, and the bundle {A, B} the pods mount is kept beside the new one.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), fpsOf(cas[0], cas[1]), map[string]any{"tls": true})
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0], cas[1]), required: map[string][]obj{
					"auth-engines":        {routed(t, "e1", "e1-service;tls")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[1].pem), certRequest(t, "e1-g2-engine-tls-1", cas[2].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), engineGateway(t, tlsDefault, "", cas[1], cas[2]), withBundle(t, cas[1], cas[2]), keptBundle(t, cas[0], cas[1]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status: status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[1]), "rolledEngineUpstream", map[string]any{"tls": true}),
					resources: res,
					readyRes:  notReady(res, bundleRN(cas[1], cas[2])),
					conditions: append(conditionsReady(), cond("EngineTLSReady", false, "Converging",
						"waiting for every gateway pod to reach engines over TLS, trusting the CAs of every live engine generation")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"UnroutableEngineNamesAreIgnored": {
			reason: "Routing Services labelled with engine names whose Services could not be DNS labels (Bad_Engine, a 63-character and a 56-character name, each publishing nothing or a route of its own) are not engines of this product: no route, not lagging; the gateway renders for e1, every engine serves TLS and EngineTLSReady is Ready.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), fpsOf(cas[0]), map[string]any{"tls": true})
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0]), required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "e1-service;tls"), routed(t, "Bad_Engine", ""),
						routed(t, long63, long63+"-next;tls"), routed(t, long56, long56+"-service;plain")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), engineGateway(t, tlsDefault, "", cas[0]), withBundle(t, cas[0]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status: status("Ready", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0]), "rolledEngineUpstream", map[string]any{"tls": true}),
					ready:     true,
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("EngineTLSReady", true, "Ready",
						"every engine serves TLS and every gateway pod verifies it against 1 CA(s)")),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_NORMAL, "Ready",
						"FireboltInstance is Ready: metadata service at "+metadataEndpoint+", gateway at "+gatewayEndpoint)},
					ttl:          stableTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"UnroutableEngineNamesWithAPlainDefault": {
			reason: "Under the plain default (anchor pending), Bad_Engine publishing a TLS route of its own Service gets no route and no bundle is mounted for it; e1 needs none.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, engineTLSSpec(""), provisioning), observed: observedRunning(t), required: map[string][]obj{
					"auth-engines":        {routed(t, "e1", ""), routed(t, "Bad_Engine", "Bad_Engine-service;tls"), routed(t, long63, long63+"-service;tls")},
					"engine-tls-requests": {certRequest(t, "x-g1-engine-tls-1", cas[1].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), wantGateway(t), map[string]obj{"engine-tls-anchor": wantEngineTLSAnchor(t)})
				return want{
					status:       status("Provisioning", derivedID, true, true),
					resources:    res,
					readyRes:     notReady(res, "engine-tls-anchor"),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "CertificatePending", pendingMsg)),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"ReenabledAnchorOfTheOldIssuer": {
			reason: "Re-enabled under internal-ca with a surviving status.engineTLS {reencrypting: false}, the observed anchor Ready but still of old-ca: not issued by the current issuer, so the status is kept not re-encrypting, the anchor is composed for internal-ca, the default stays plain (the bundle mounted, as a status is kept), and engines are not told to serve TLS.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning),
					map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt, "reencrypting": false}, nil, nil)
				o := observedRunning(t)
				o["engine-tls-anchor"] = issued(t, wantEngineTLSAnchor(t).with(t, "spec.issuerRef.name", "old-ca"))
				return request{xr: x, observed: o, required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "")}, "engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem)},
				}}
			},
			// No whole-response want: EngineTLSReady reads Converging
			// ("waiting for 1 engine(s) (e1) to serve TLS"), where
			// CertificatePending is expected, so it is not asserted.
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
				if diff := cmp.Diff(map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt}, st["engineTLS"]); diff != "" {
					t.Errorf("status.engineTLS: -want, +got:\n%s", diff)
				}
				if st["rolledEngineTrustCAs"] != nil || st["rolledEngineUpstream"] != nil {
					t.Errorf("nothing was rolled, yet rolled is %v %v", st["rolledEngineTrustCAs"], st["rolledEngineUpstream"])
				}
				res := rsp.GetDesired().GetResources()
				wantRes := merge(engineGateway(t, envoyconfig.Upstream{}, "", cas[0]), withBundle(t, cas[0]), map[string]obj{"engine-tls-anchor": wantEngineTLSAnchor(t)})
				for n, o := range wantRes {
					if diff := cmp.Diff(map[string]any(o.with(t)), res[n].GetResource().AsMap()); diff != "" {
						t.Errorf("%s: -want, +got:\n%s", n, diff)
					}
				}
				if es := engineStateOf(t, rsp); es.EngineTLS != nil {
					t.Errorf("engine-state publishes engineTLS %+v for an anchor not issued by the current issuer", es.EngineTLS)
				}
				for _, c := range rsp.GetConditions() {
					if c.GetType() == "EngineTLSReady" && c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE {
						t.Errorf("EngineTLSReady is %s %s, want False", c.GetStatus(), c.GetReason())
					}
				}
			},
		},
		"AnchorReissuingKeepsReencrypting": {
			reason: "Enabled and re-encrypting, the anchor re-issuing (generation 2, Ready for generation 1, e.g. a new duration): status.engineTLS is kept re-encrypting, the default stays TLS, what is rolled stays, and engines are still told to serve TLS.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), fpsOf(cas[0]), map[string]any{"tls": true})
				o := running(t, tlsDefault, "", cas[0])
				o["engine-tls-anchor"] = issued(t, wantEngineTLSAnchor(t)).with(t, "metadata.generation", 2)
				return request{xr: x, observed: o, required: map[string][]obj{
					"auth-engines":        {routed(t, "e1", "e1-service;tls"), routed(t, "e2", "")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem)},
				}}
			},
			want: func(t *testing.T) want {
				up := envoyconfig.Upstream{TLS: true, Routes: []envoyconfig.EngineRoute{{Engine: "e2", Service: "e2-service"}}}
				res := merge(base(t), engineGateway(t, up, "", cas[0]), withBundle(t, cas[0]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status: status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0]), "rolledEngineUpstream", map[string]any{"tls": true}),
					resources:    res,
					readyRes:     notReady(res, "engine-tls-anchor"),
					conditions:   append(conditionsReady(), cond("EngineTLSReady", false, "Converging", "waiting for 1 engine(s) (e2) to serve TLS")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
			check: func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
				if st := engineStateOf(t, rsp); st.EngineTLS == nil || st.EngineTLS.IssuerRef.Name != "internal-ca" {
					t.Errorf("engine-state publishes engineTLS %+v while re-encrypting, want internal-ca's", st.EngineTLS)
				}
			},
		},
		"NewCAKeepsTheOldBundleWhilePodsRunIt": {
			reason: "A new CA is listed (e1's next generation under D) while every pod runs the bundle {A}: the bundle {A, D} is rendered under its own name, the observed {A} is returned unchanged beside it, and only A is rolled.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), fpsOf(cas[0]), map[string]any{"tls": true})
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0]), required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "e1-service;tls")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[0].pem),
						certRequest(t, "e1-g2-engine-tls-1", cas[3].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), engineGateway(t, tlsDefault, "", cas[0], cas[3]), withBundle(t, cas[0], cas[3]), keptBundle(t, cas[0]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status: status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0]), "rolledEngineUpstream", map[string]any{"tls": true}),
					resources: res,
					readyRes:  notReady(res, bundleRN(cas[0], cas[3])),
					conditions: append(conditionsReady(), cond("EngineTLSReady", false, "Converging",
						"waiting for every gateway pod to reach engines over TLS, trusting the CAs of every live engine generation")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"OldBundleKeptWhilePodsRoll": {
			reason: "The Deployment's template carries the new hash but only some pods run it: the old bundle is still mounted by the others and is returned unchanged; only A is rolled.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), fpsOf(cas[0]), map[string]any{"tls": true})
				o := running(t, tlsDefault, "", cas[0], cas[3])
				o["gateway"] = o["gateway"].with(t, "metadata.generation", 3,
					"status", map[string]any{"observedGeneration": 3, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 3, "availableReplicas": 3})
				o[bundleRN(cas[0])] = wantEngineCABundle(t, cas[0])
				return request{xr: x, observed: o, required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "e1-service;tls")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[0].pem),
						certRequest(t, "e1-g2-engine-tls-1", cas[3].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), engineGateway(t, tlsDefault, "", cas[0], cas[3]), withBundle(t, cas[0], cas[3]), keptBundle(t, cas[0]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				ready := allReady(keys(res)...)
				ready["gateway"] = false
				return want{
					status: status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0]), "rolledEngineUpstream", map[string]any{"tls": true}),
					resources: res,
					readyRes:  ready,
					conditions: append(conditionsReady(), cond("EngineTLSReady", false, "Converging",
						"waiting for every gateway pod to reach engines over TLS, trusting the CAs of every live engine generation")),
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
		"OldBundleDroppedOncePodsRunTheNew": {
			reason: "Every pod runs the hash of the bundle {A, D}: the old observed bundle {A} is left out (deleted), only the new one is returned, and {A, D} is rolled.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(""), provisioning), reencrypting(anchorCreatedAt), fpsOf(cas[0]), map[string]any{"tls": true})
				o := running(t, tlsDefault, "", cas[0], cas[3])
				o[bundleRN(cas[0])] = wantEngineCABundle(t, cas[0])
				return request{xr: x, observed: o, required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "e1-service;tls")},
					"engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[0].pem),
						certRequest(t, "e1-g2-engine-tls-1", cas[3].pem)},
				}}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), engineGateway(t, tlsDefault, "", cas[0], cas[3]), withBundle(t, cas[0], cas[3]), map[string]obj{
					"engine-tls-anchor": wantEngineTLSAnchor(t),
				})
				return want{
					status: status("Ready", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0], cas[3]), "rolledEngineUpstream", map[string]any{"tls": true}),
					ready:     true,
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: append(conditionsReady(), cond("EngineTLSReady", true, "Ready",
						"every engine serves TLS and every gateway pod verifies it against 2 CA(s)")),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_NORMAL, "Ready",
						"FireboltInstance is Ready: metadata service at "+metadataEndpoint+", gateway at "+gatewayEndpoint)},
					ttl:          stableTTL,
					requirements: engineTLSRequirements(),
				}
			},
		},
	}
	for _, minted := range []string{"demo-engine-tls", "demo-gateway-tls", "demo-engine-ca-bundle"} {
		cases["CRLSecretRefMinted/"+minted] = engineTLSCase{
			reason: "crlSecretRef names a Secret the instance mints: TLSSpecInvalid naming the field with a warning; the anchor, the gateway and its bundle are kept as observed, the status as recorded.",
			req: func(t *testing.T) request {
				x := withEngineTLS(t, xr(t, engineTLSSpec(", crlSecretRef: {name: "+minted+"}"), provisioning),
					reencrypting(anchorCreatedAt), fpsOf(cas[0]), map[string]any{"tls": true})
				return request{xr: x, observed: running(t, tlsDefault, "", cas[0]), required: map[string][]obj{
					"auth-engines": {routed(t, "e1", "e1-service;tls")}, "engine-tls-requests": {certRequest(t, "demo-engine-tls-1", cas[0].pem)},
				}}
			},
			want: func(t *testing.T) want {
				o := running(t, tlsDefault, "", cas[0])
				res := base(t)
				for _, n := range append(slices.Clone(gatewayNames), bundleRN(cas[0]), "engine-tls-anchor") {
					res[n] = kept(t, o[n])
				}
				msg := `spec.tls.engine.crlSecretRef.name: "` + minted + `" is a Secret this instance mints; name a Secret of yours`
				return want{
					status: status("Provisioning", derivedID, true, true).with(t, "engineTLS", reencrypting(anchorCreatedAt),
						"rolledEngineTrustCAs", fpsOf(cas[0]), "rolledEngineUpstream", map[string]any{"tls": true}),
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: []*fnv1.Condition{
						conditionsReady()[0],
						cond("GatewayReady", false, "Provisioning", "the gateway keeps its configuration: "+msg),
						cond("EngineTLSReady", false, "TLSSpecInvalid", msg),
					},
					results:      []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "TLSSpecInvalid", msg)},
					ttl:          provisioningTTL,
					requirements: engineTLSRequirements(),
				}
			},
		}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := function(noPassword(t)).RunFunction(context.Background(), tc.req(t).build(t))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want(t).build(t), withoutEngineState(t, rsp), protocmp.Transform()); diff != "" {
					t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
				}
			}
			if tc.check != nil {
				tc.check(t, rsp)
			}
		})
	}
}

func isNil(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case []any:
		return v == nil
	case map[string]any:
		return v == nil
	}
	return false
}

// TestRunFunctionEngineTLSFrozenWhileUnlisted: engine TLS on and rolled
// out, and Crossplane has listed neither the engines nor their
// CertificateRequests, or only the engines: the gateway and every observed
// bundle (the one it mounts, and another rendered earlier) are returned
// exactly as observed, the anchor is composed, and what is rolled is kept.
func TestRunFunctionEngineTLSFrozenWhileUnlisted(t *testing.T) {
	cas, _ := engineCAs()
	for name, required := range map[string]func(t *testing.T) map[string][]obj{
		"NothingListed": func(*testing.T) map[string][]obj { return nil },
		"EnginesOnly": func(t *testing.T) map[string][]obj {
			return map[string][]obj{"auth-engines": {routed(t, "e1", "e1-service;tls")}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := observedRunning(t)
			g := engineGateway(t, envoyconfig.Upstream{TLS: true}, "", cas[0])
			for _, n := range gatewayNames {
				o[n] = g[n]
			}
			o["gateway"] = rolledOut(t, g["gateway"])
			o[bundleRN(cas[0])] = wantEngineCABundle(t, cas[0])
			o[bundleRN(cas[0], cas[1])] = wantEngineCABundle(t, cas[0], cas[1])
			o["engine-tls-anchor"] = issued(t, wantEngineTLSAnchor(t))
			x := xr(t, engineTLSSpec(""), provisioning).with(t,
				"status.engineTLS", map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt, "reencrypting": true, "issuerRef": provenIssuer()},
				"status.rolledEngineTrustCAs", fpsOf(cas[0]), "status.rolledEngineUpstream", map[string]any{"tls": true})
			rsp, err := function(noPassword(t)).RunFunction(context.Background(), request{xr: x, observed: o, required: required(t)}.build(t))
			if err != nil {
				t.Fatal(err)
			}
			res := rsp.GetDesired().GetResources()
			for _, n := range append(slices.Clone(gatewayNames), bundleRN(cas[0]), bundleRN(cas[0], cas[1])) {
				if diff := cmp.Diff(map[string]any(kept(t, o[n])), res[n].GetResource().AsMap()); diff != "" {
					t.Errorf("%s is not returned as observed: -want, +got:\n%s", n, diff)
				}
			}
			if diff := cmp.Diff(map[string]any(wantEngineTLSAnchor(t)), res["engine-tls-anchor"].GetResource().AsMap()); diff != "" {
				t.Errorf("the anchor: -want, +got:\n%s", diff)
			}
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			if diff := cmp.Diff(fpsOf(cas[0]), st["rolledEngineTrustCAs"]); diff != "" {
				t.Errorf("rolledEngineTrustCAs moved: -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(map[string]any{"tls": true}, st["rolledEngineUpstream"]); diff != "" {
				t.Errorf("rolledEngineUpstream moved: -want, +got:\n%s", diff)
			}
			if et, _ := st["engineTLS"].(map[string]any); et["secretName"] != "demo-engine-tls" || et["createdAt"] != anchorCreatedAt {
				t.Errorf("status.engineTLS = %v, want the recorded anchor kept", et)
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == "GatewayReady" && (c.GetReason() != "Provisioning" || !strings.HasPrefix(c.GetMessage(), "the gateway keeps its configuration: ")) {
					t.Errorf("GatewayReady = %s %q, want Provisioning: the gateway keeps its configuration", c.GetReason(), c.GetMessage())
				}
			}
		})
	}
}

// TestRunFunctionEngineTLSBundleNamedByContent: the bundle rendered is an
// immutable ConfigMap named, as its composition resource, after the first
// 10 hex characters of SHA-256 over its length-prefixed ca.crt; the gateway
// mounts that name; the same CAs listed in any order, or twice, name the
// same bundle, other CAs another.
func TestRunFunctionEngineTLSBundleNamedByContent(t *testing.T) {
	cas, _ := engineCAs()
	// nameOf recomputes the rule from the bundle's content.
	nameOf := func(data string) string {
		h := sha256.New()
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(len(data)))
		h.Write(l[:])
		h.Write([]byte(data))
		return hex.EncodeToString(h.Sum(nil))[:10]
	}
	// render answers engine TLS re-encrypting with requests listed, and
	// says the bundle's composition resource name.
	render := func(t *testing.T, requests ...obj) string {
		t.Helper()
		x := xr(t, engineTLSSpec(""), provisioning).with(t, "status.engineTLS", reencryptingSince(anchorCreatedAt))
		o := observedRunning(t)
		o["engine-tls-anchor"] = issued(t, wantEngineTLSAnchor(t))
		rsp, err := function(noPassword(t)).RunFunction(context.Background(), request{xr: x, observed: o, required: map[string][]obj{
			"auth-engines": {routed(t, "e1", "e1-service;tls")}, "engine-tls-requests": requests,
		}}.build(t))
		if err != nil {
			t.Fatal(err)
		}
		res := rsp.GetDesired().GetResources()
		var rns []string
		for rn := range res {
			if strings.HasPrefix(rn, "engine-ca-bundle") {
				rns = append(rns, rn)
			}
		}
		if len(rns) != 1 {
			t.Fatalf("engine CA bundles composed: %v, want one", rns)
		}
		b := res[rns[0]].GetResource().AsMap()
		h := nameOf(str(b, "data", "ca.crt"))
		if rns[0] != "engine-ca-bundle-"+h {
			t.Errorf("the bundle's composition resource is %s, want engine-ca-bundle-%s", rns[0], h)
		}
		if name := str(b, "metadata", "name"); name != "demo-engine-ca-bundle-"+h {
			t.Errorf("the bundle's ConfigMap is %s, want demo-engine-ca-bundle-%s", name, h)
		}
		if b["immutable"] != true {
			t.Errorf("the bundle's immutable is %v, want true", b["immutable"])
		}
		if m := mountedBundles(res["gateway"].GetResource().AsMap()); !slices.Equal(m, []string{"demo-engine-ca-bundle-" + h}) {
			t.Errorf("the gateway mounts %v, want demo-engine-ca-bundle-%s", m, h)
		}
		return rns[0]
	}
	one := render(t, certRequest(t, "demo-engine-tls-1", cas[0].pem))
	two := render(t, certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[1].pem))
	if want := bundleRN(cas[0]); one != want {
		t.Errorf("the bundle of A is %s, want %s", one, want)
	}
	if one == two {
		t.Errorf("the bundles of {A} and {A, B} are both named %s", one)
	}
	if again := render(t, certRequest(t, "e1-g1-engine-tls-1", cas[1].pem), certRequest(t, "e2-g1-engine-tls-1", cas[0].pem)); again != two {
		t.Errorf("{A, B} listed in another order by other requests is named %s, want %s", again, two)
	}
	if again := render(t, certRequest(t, "demo-engine-tls-1", cas[0].pem), certRequest(t, "e1-g1-engine-tls-1", cas[0].pem)); again != one {
		t.Errorf("A listed twice is named %s, want %s", again, one)
	}
}

// engineTLSWorld is one drawn instance for the engine TLS properties: its
// spec, its engines and what they publish, the CertificateRequests
// listed, what status recorded, the gateway Deployment and the bundles
// observed.
type engineTLSWorld struct {
	spec    int
	engines []string
	routes  map[string]string // annotation by engine, "" for none
	// anchor: 0 none, 1 composed, 2 issued at revision 1, 3 at revision
	// 2, 4 issued at revision 1 by another issuer (old-ca), 5 re-issuing
	// (generation 2, Ready for generation 1, at revision 1).
	anchor int
	// anchorRequest is the revision of the anchor's CertificateRequest
	// listed (0: none), anchorCA whether its status.ca is a CA.
	anchorRequest int
	anchorCA      bool
	requests      []obj
	listedCAs     []string // fingerprints of the CAs among requests
	resolved      int      // 0 everything listed, 1 nothing, 2 engines only
	prevTLS       map[string]any
	prevTrust     []string
	prevUp        map[string]any
	// oldBundle are the CAs of a bundle observed from an earlier call (nil:
	// none).
	oldBundle []testCA
	// gateway: 0 the plain gateway rolled out, 1 none, 2 what this call
	// renders rolled out, 3 rendered and rolling, 4 a TLS gateway
	// mounting oldBundle rolled out.
	gateway int
}

// The specs drawn: none, off, on, on with a CRL, on with a CRL the
// instance mints.
var engineTLSWorldSpecs = []string{
	defaultSpec, engineTLSOffSpec, engineTLSSpec(""),
	engineTLSSpec(", crlSecretRef: {name: engine-crl}"), engineTLSSpec(", crlSecretRef: {name: demo-engine-tls}"),
}

// worldRoutes are the annotations an engine e's routing Service may carry:
// its own two Services in either protocol, and what must be refused.
func worldRoutes(e string) []string {
	return []string{"", e + "-service;tls", e + "-service;plain", e + "-next;tls", e + "-next;plain",
		"other-service;tls", "x;y", "zz-next;tls", e + "-service;TLS", e + "-service", e + "-next;tls;x"}
}

// worldEngines are the engine names drawn: routable ones, and names whose
// Services are no DNS labels (ignored by the function).
var worldEngines = []string{"e0", "e1", "e2", "e3", "e4", "Bad_Engine", "e" + strings.Repeat("x", 62)}

// routableName says whether e's two Services are DNS labels: lower-case
// alphanumerics and '-', starting and ending alphanumeric, at most 63
// characters for <e>-service.
func routableName(e string) bool {
	if len(e+"-service") > 63 || e == "" {
		return false
	}
	for i, r := range e {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && (r != '-' || i == 0) {
			return false
		}
	}
	return true
}

// ownRoute is the route annotation a says engine e asks for, if it is one
// of e's two Services in a known protocol.
func ownRoute(e, a string) (svc string, tls, ok bool) {
	svc, proto, found := strings.Cut(a, ";")
	if !found || (svc != e+"-service" && svc != e+"-next") || (proto != "tls" && proto != "plain") {
		return "", false, false
	}
	return svc, proto == "tls", true
}

// anchorRevision is the revision of the anchor drawn (1 before it is
// issued: its first request's).
func (w engineTLSWorld) anchorRevision() int {
	if w.anchor == 3 {
		return 2
	}
	return 1
}

// caBacked says the anchor is issued by the current issuer for its
// generation, its current request listed with a CA.
func (w engineTLSWorld) caBacked() bool {
	return (w.anchor == 2 || w.anchor == 3) && w.anchorRequest == w.anchorRevision() && w.anchorCA && w.resolved == 0
}

// prevReencrypting: the recorded status re-encrypts under the issuer the
// spec names.
func (w engineTLSWorld) prevReencrypting() bool {
	return w.prevTLS != nil && w.prevTLS["reencrypting"] == true && cmp.Equal(w.prevTLS["issuerRef"], provenIssuer())
}

// provenIssuer is status.engineTLS.issuerRef for the issuer the specs
// name.
func provenIssuer() map[string]any {
	return map[string]any{"name": "internal-ca", "kind": "ClusterIssuer"}
}

func drawEngineTLSWorld(t *testing.T, rt *rapid.T) engineTLSWorld {
	cas, leaf := engineCAs()
	draw := func(n int, label string) int { return rapid.IntRange(0, n-1).Draw(rt, label) }
	w := engineTLSWorld{spec: draw(len(engineTLSWorldSpecs), "spec"), routes: map[string]string{}}
	for i := range draw(5, "engines") {
		e := worldEngines[i]
		if draw(4, "bad name "+e) == 0 {
			e = worldEngines[5+draw(2, "which bad name")]
			if slices.Contains(w.engines, e) {
				continue
			}
		}
		w.engines = append(w.engines, e)
		w.routes[e] = worldRoutes(e)[draw(len(worldRoutes(e)), "route "+e)]
	}
	w.anchor = []int{0, 1, 2, 2, 3, 4, 5}[draw(7, "anchor")]
	// ca draws one status.ca: none, a leaf, or one of the CAs.
	ca := func(label string) string {
		switch k := draw(len(cas)+2, label); k {
		case 0:
			return ""
		case 1:
			return leaf
		default:
			w.listedCAs = append(w.listedCAs, cas[k-2].fp)
			return cas[k-2].pem
		}
	}
	// The anchor's request: none, its current revision's, or the other
	// revision's.
	current := w.anchorRevision()
	if w.anchorRequest = []int{0, current, current, 3 - current}[draw(4, "anchor request")]; w.anchorRequest > 0 {
		p := ca("anchor ca")
		w.anchorCA = p != "" && p != leaf
		w.requests = append(w.requests, certRequest(t, "demo-engine-tls-"+string(rune('0'+w.anchorRequest)), p))
	}
	for i := range draw(4, "engine requests") {
		w.requests = append(w.requests, certRequest(t, "e"+string(rune('0'+i))+"-g1-engine-tls-1", ca("engine ca")))
	}
	w.resolved = []int{0, 0, 0, 1, 2}[draw(5, "resolved")]
	switch draw(4, "status.engineTLS") {
	case 1:
		w.prevTLS = map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt, "reencrypting": true, "issuerRef": provenIssuer()}
	case 3:
		// Re-encrypting under an issuer the spec no longer names.
		w.prevTLS = map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt, "reencrypting": true,
			"issuerRef": map[string]any{"name": "old-ca", "kind": "ClusterIssuer"}}
	case 2:
		w.prevTLS = map[string]any{"secretName": "demo-engine-tls", "createdAt": anchorCreatedAt}
	}
	mask := draw(1<<len(cas), "rolled CAs")
	for i, c := range cas {
		if mask&(1<<i) != 0 {
			w.prevTrust = append(w.prevTrust, c.fp)
		}
	}
	switch draw(4, "rolled upstream") {
	case 1:
		w.prevUp = map[string]any{"tls": true}
	case 2:
		w.prevUp = map[string]any{"routes": []any{map[string]any{"engine": "e0", "service": "e0-next", "tls": true}}}
	case 3:
		w.prevUp = map[string]any{"tls": true, "routes": []any{map[string]any{"engine": "e0", "service": "e0-service"}}}
	}
	w.gateway = []int{0, 1, 2, 2, 3, 4}[draw(6, "gateway")]
	old := draw(1<<len(cas), "old bundle")
	if w.gateway == 4 && old == 0 {
		old = 1
	}
	for i, c := range cas {
		if old&(1<<i) != 0 {
			w.oldBundle = append(w.oldBundle, c)
		}
	}
	return w
}

// observedGateway is the gateway Deployment the world starts with (nil:
// none).
func (w engineTLSWorld) observedGateway(t *testing.T) obj {
	switch w.gateway {
	case 1:
		return nil
	case 4:
		return rolledOut(t, engineGateway(t, envoyconfig.Upstream{TLS: true}, "", w.oldBundle...)["gateway"])
	}
	return observedRunning(t)["gateway"]
}

// request is the call for the world, with the gateway observed as gw
// (nil: none), the old bundle if any, and bundles observed besides.
func (w engineTLSWorld) request(t *testing.T, gw obj, bundles map[string]obj) request {
	x := xr(t, engineTLSWorldSpecs[w.spec], provisioning)
	if w.prevTLS != nil {
		x = x.with(t, "status.engineTLS", w.prevTLS)
	}
	if len(w.prevTrust) > 0 {
		x = x.with(t, "status.rolledEngineTrustCAs", w.prevTrust)
	}
	if w.prevUp != nil {
		x = x.with(t, "status.rolledEngineUpstream", w.prevUp)
	}
	o := observedRunning(t)
	delete(o, "gateway")
	if gw != nil {
		o["gateway"] = gw
	}
	if len(w.oldBundle) > 0 {
		o[bundleRN(w.oldBundle...)] = wantEngineCABundle(t, w.oldBundle...)
	}
	for rn, b := range bundles {
		o[rn] = b
	}
	anchor := wantEngineTLSAnchor(t)
	switch w.anchor {
	case 1:
		o["engine-tls-anchor"] = anchor
	case 2, 3:
		o["engine-tls-anchor"] = issuedAt(t, anchor, w.anchorRevision())
	case 4:
		o["engine-tls-anchor"] = issuedAt(t, anchor.with(t, "spec.issuerRef.name", "old-ca"), 1)
	case 5:
		o["engine-tls-anchor"] = issuedAt(t, anchor, 1).with(t, "metadata.generation", 2)
	}
	svcs := make([]obj, 0, len(w.engines))
	for _, e := range w.engines {
		svcs = append(svcs, routed(t, e, w.routes[e]))
	}
	req := request{xr: x, observed: o}
	switch w.resolved {
	case 0:
		req.required = map[string][]obj{"auth-engines": svcs, "engine-tls-requests": w.requests}
	case 2:
		req.required = map[string][]obj{"auth-engines": svcs}
	}
	return req
}

// engineTLSCall is one call's answer, read back.
type engineTLSCall struct {
	status      map[string]any
	resources   map[string]map[string]any
	conds       map[string]*fnv1.Condition
	engineState instancestate.State
}

// hash is the config hash of the gateway Deployment answered.
func (c engineTLSCall) hash() string {
	return str(c.resources["gateway"], "spec", "template", "metadata", "annotations", "firebolt.io/config-hash")
}

// bundles are the engine CA bundles answered, by composition resource
// name.
func (c engineTLSCall) bundles() map[string]map[string]any {
	out := map[string]map[string]any{}
	for rn, r := range c.resources {
		if strings.HasPrefix(rn, "engine-ca-bundle-") {
			out[rn] = r
		}
	}
	return out
}

// observedBundles are the engine CA bundles req observes.
func observedBundles(req request) map[string]obj {
	out := map[string]obj{}
	for rn, o := range req.observed {
		if strings.HasPrefix(rn, "engine-ca-bundle-") {
			out[rn] = o
		}
	}
	return out
}

// mountedBundles are the ConfigMaps a gateway Deployment's template mounts
// its engine CAs from.
func mountedBundles(d map[string]any) []string {
	var out []string
	spec, _ := d["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	for _, v := range asList(pod["volumes"]) {
		v, _ := v.(map[string]any)
		if v["name"] == "engine-ca" {
			out = append(out, str(v, "configMap", "name"))
		}
	}
	return out
}

// str is the string at path in m, "" when there is none.
func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, _ := cur.(map[string]any)
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

// strs is a list of strings as a Struct holds it.
func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, s := range l {
		out = append(out, s.(string))
	}
	return out
}

// call runs the function on req, which must answer without a fatal
// result.
func (w engineTLSWorld) call(t *testing.T, rt *rapid.T, req request) engineTLSCall {
	rsp, err := function(noPassword(t)).RunFunction(context.Background(), req.build(t))
	if err != nil {
		rt.Fatal(err)
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			rt.Fatalf("fatal result: %s", r.GetMessage())
		}
	}
	c := engineTLSCall{resources: map[string]map[string]any{}, conds: map[string]*fnv1.Condition{}}
	c.status, _ = rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	for n, r := range rsp.GetDesired().GetResources() {
		c.resources[n] = r.GetResource().AsMap()
	}
	for _, cd := range rsp.GetConditions() {
		c.conds[cd.GetType()] = cd
	}
	c.engineState = engineStateOf(t, rsp)
	return c
}

// check asserts the properties of one call c on req, whose gateway
// Deployment observed is gw, every pod of it running its template when
// rolled.
func (w engineTLSWorld) check(t *testing.T, rt *rapid.T, req request, c engineTLSCall, gw obj, rolled bool) {
	_, leaf := engineCAs()
	gwCond := c.conds["GatewayReady"]
	if gwCond.GetReason() == "EnsureFailed" {
		rt.Fatalf("the gateway cannot be rendered for engines %v publishing %v: %s", w.engines, w.routes, gwCond.GetMessage())
	}
	frozen := strings.HasPrefix(gwCond.GetMessage(), "the gateway keeps its configuration")
	prevUp := w.prevUp
	gotTrust, gotUp := strs(c.status["rolledEngineTrustCAs"]), c.status["rolledEngineUpstream"]
	bundles, observed := c.bundles(), observedBundles(req)

	// Every bundle a gateway template mounts, the one answered or the one
	// pods may still run, is answered: a pod cannot start without it.
	byName := map[string]map[string]any{}
	for _, b := range bundles {
		byName[str(b, "metadata", "name")] = b
	}
	mounts := mountedBundles(c.resources["gateway"])
	if gw != nil {
		mounts = append(mounts, mountedBundles(gw)...)
	}
	for _, name := range mounts {
		if byName[name] == nil {
			rt.Fatalf("a gateway template mounts the bundle %s, which is not answered (answered %v)", name, slices.Sorted(maps.Keys(byName)))
		}
	}

	// Every bundle: CA certificates only, each fingerprinted in the
	// annotation.
	fpsOfBundle := func(b map[string]any) []string {
		var fps []string
		rest := []byte(str(b, "data", "ca.crt"))
		for {
			var blk *pem.Block
			blk, rest = pem.Decode(rest)
			if blk == nil {
				break
			}
			cert, err := x509.ParseCertificate(blk.Bytes)
			if err != nil || !cert.IsCA {
				rt.Fatalf("an engine CA bundle holds a certificate that is not a CA (err %v)", err)
			}
			p := string(pem.EncodeToMemory(blk))
			if strings.TrimSpace(p) == strings.TrimSpace(leaf) {
				rt.Fatal("an engine CA bundle holds the anchor's leaf")
			}
			fps = append(fps, fingerprint(p))
		}
		if strings.TrimSpace(string(rest)) != "" {
			rt.Fatalf("an engine CA bundle holds what is not PEM: %q", rest)
		}
		if ann := str(b, "metadata", "annotations", "firebolt.io/engine-trust-cas"); ann != strings.Join(fps, ",") {
			rt.Fatalf("a bundle's annotation %q is not the fingerprints of what it holds %v", ann, fps)
		}
		return fps
	}
	for _, b := range bundles {
		fpsOfBundle(b)
	}

	if frozen {
		// Kept as observed, every observed bundle with it and no other,
		// and nothing new is published as rolled.
		if gw != nil && !cmp.Equal(map[string]any(kept(t, gw)), c.resources["gateway"]) {
			rt.Fatalf("a frozen gateway Deployment is not returned as observed:\n%s", cmp.Diff(map[string]any(kept(t, gw)), c.resources["gateway"]))
		}
		if gw == nil && c.resources["gateway"] != nil {
			rt.Fatal("a frozen gateway that does not exist is rendered")
		}
		if !slices.Equal(slices.Sorted(maps.Keys(bundles)), slices.Sorted(maps.Keys(observed))) {
			rt.Fatalf("a frozen gateway's bundles are %v, observed %v", slices.Sorted(maps.Keys(bundles)), slices.Sorted(maps.Keys(observed)))
		}
		for rn, ob := range observed {
			if !cmp.Equal(map[string]any(kept(t, ob)), bundles[rn]) {
				rt.Fatalf("a frozen gateway's bundle %s is not returned as observed:\n%s", rn, cmp.Diff(map[string]any(kept(t, ob)), bundles[rn]))
			}
		}
		if !slices.Equal(gotTrust, w.prevTrust) || !cmp.Equal(gotUp, anyOf(prevUp)) {
			rt.Fatalf("frozen, yet rolled moved from %v %v to %v %v", w.prevTrust, prevUp, gotTrust, gotUp)
		}
		return
	}

	// The bundle rendered is the one the answered template mounts: named
	// after its content, immutable, holding exactly the CAs listed.
	var fps []string
	renderedRN := ""
	switch m := mountedBundles(c.resources["gateway"]); len(m) {
	case 0:
	case 1:
		b := byName[m[0]]
		data := str(b, "data", "ca.crt")
		h := configHash(data)[:10]
		renderedRN = "engine-ca-bundle-" + h
		if bundles[renderedRN] == nil || str(b, "metadata", "name") != "demo-engine-ca-bundle-"+h {
			rt.Fatalf("the bundle mounted, %s, is not named after its content (hash %s)", m[0], h)
		}
		if b["immutable"] != true {
			rt.Fatalf("the bundle rendered is not immutable: %v", b["immutable"])
		}
		fps = fpsOfBundle(b)
		want := slices.Compact(slices.Sorted(slices.Values(w.listedCAs)))
		if !slices.Equal(fps, want) {
			rt.Fatalf("the bundle holds %v, the CertificateRequests list the CAs %v", fps, want)
		}
	default:
		rt.Fatalf("the gateway mounts %d engine CA bundles: %v", len(m), m)
	}

	// podsServe: every pod runs the rendered template, which mounts its
	// bundle by a name of its content. serving: also the ConfigMap it
	// mounts by one name was observed holding the rendered files, so what
	// the pods route by is what was rendered.
	podsServe := rolled && gw != nil && c.hash() != "" && str(gw, "spec", "template", "metadata", "annotations", "firebolt.io/config-hash") == c.hash()
	serving := podsServe && cmp.Equal(req.observed["gateway-config"]["data"], c.resources["gateway-config"]["data"])
	for rn, b := range bundles {
		ob, wasObserved := observed[rn]
		switch {
		case rn == renderedRN:
		case !wasObserved:
			rt.Fatalf("the bundle %s is answered, neither rendered nor observed", rn)
		case podsServe:
			rt.Fatalf("every pod runs the rendered hash, yet the observed bundle %s is answered", rn)
		case !cmp.Equal(map[string]any(kept(t, ob)), b):
			rt.Fatalf("the observed bundle %s is not returned unchanged:\n%s", rn, cmp.Diff(map[string]any(kept(t, ob)), b))
		}
	}
	if !podsServe {
		for rn := range observed {
			if bundles[rn] == nil {
				rt.Fatalf("pods do not all run the rendered hash, yet the observed bundle %s is dropped", rn)
			}
		}
	}

	for _, fp := range gotTrust {
		if !slices.Contains(w.prevTrust, fp) && !slices.Contains(fps, fp) {
			rt.Fatalf("rolled trusts %s, neither rolled before (%v) nor in the bundle rendered (%v)", fp, w.prevTrust, fps)
		}
		if !serving && !slices.Contains(w.prevTrust, fp) {
			rt.Fatalf("no pod runs the bundle rendered, yet rolled trusts %s it did not before", fp)
		}
	}
	if serving {
		if !slices.Equal(gotTrust, fps) {
			rt.Fatalf("every pod runs the rendered bundle %v, yet rolled trusts %v", fps, gotTrust)
		}
	} else {
		var want []string
		for _, fp := range w.prevTrust {
			if slices.Contains(fps, fp) {
				want = append(want, fp)
			}
		}
		if !slices.Equal(gotTrust, want) {
			rt.Fatalf("pods do not run the rendered bundle %v: rolled trust %v, want %v (before %v)", fps, gotTrust, want, w.prevTrust)
		}
		if !cmp.Equal(gotUp, anyOf(prevUp)) {
			rt.Fatalf("pods do not run the rendered gateway, yet rolled upstream moved from %v to %v", prevUp, gotUp)
		}
	}

	envoy := str(c.resources["gateway-config"], "data", "envoy.yaml")
	for _, hostile := range []string{"other-service", "zz-next", "x.firebolt", "Bad_Engine", "exxxx"} {
		if strings.Contains(envoy, hostile) {
			rt.Fatalf("the gateway reaches %s, which no engine owns", hostile)
		}
	}
	if !serving {
		return
	}
	// What every pod runs is what was rendered: the routes are exactly the
	// routable engines reached otherwise than by default, each at its own
	// Service, and envoy.yaml is that upstream's.
	var up envoyconfig.Upstream
	if m, _ := gotUp.(map[string]any); m != nil {
		up.TLS, _ = m["tls"].(bool)
		for _, r := range asList(m["routes"]) {
			r := r.(map[string]any)
			tls, _ := r["tls"].(bool)
			up.Routes = append(up.Routes, envoyconfig.EngineRoute{Engine: r["engine"].(string), Service: r["service"].(string), TLS: tls})
		}
	}
	var want []envoyconfig.EngineRoute
	// An instance that neither configures engine TLS nor ever had it
	// (nothing of it in its status) reads no engine's route: none of its
	// engines can serve TLS, and it costs nothing more (engineTLSActive).
	active := w.spec != 0 || w.prevTLS != nil || w.prevUp != nil || len(w.prevTrust) > 0
	if w.resolved == 0 && active {
		for _, e := range slices.Sorted(slices.Values(w.engines)) {
			if !routableName(e) {
				continue
			}
			svc, tls, ok := ownRoute(e, w.routes[e])
			switch {
			case ok && (svc != e+"-service" || tls != up.TLS):
				want = append(want, envoyconfig.EngineRoute{Engine: e, Service: svc, TLS: tls})
			case !ok && up.TLS:
				want = append(want, envoyconfig.EngineRoute{Engine: e, Service: e + "-service"})
			}
		}
	}
	if !slices.Equal(up.Routes, want) {
		rt.Fatalf("engines %v publishing %v (default TLS %t): routes %+v, want %+v", w.engines, w.routes, up.TLS, up.Routes, want)
	}
	up.CRL = w.spec == 3 && up.UsesTLS()
	files, err := envoyconfig.Files(envoyconfig.Params{Namespace: namespace, WakeAgent: true, Upstream: up})
	if err != nil {
		rt.Fatal(err)
	}
	if files["envoy.yaml"] != envoy {
		rt.Fatalf("envoy.yaml is not the configuration of the upstream published as rolled (%+v)", up)
	}
}

func anyOf(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// checkStatus asserts status.engineTLS and what the engine-state
// ConfigMap publishes of it: re-encrypting only while enabled, and then
// exactly when the anchor is shown issued by the current issuer with a CA
// or it re-encrypted already; engines told to serve TLS exactly then.
func (w engineTLSWorld) checkStatus(rt *rapid.T, c engineTLSCall) bool {
	et, _ := c.status["engineTLS"].(map[string]any)
	reenc := et != nil && et["reencrypting"] == true
	switch w.spec {
	case 0, 1:
		if reenc {
			rt.Fatalf("status.engineTLS %v is reencrypting for spec %s, recorded %v", et, engineTLSWorldSpecs[w.spec], w.prevTLS)
		}
	case 2, 3:
		if want := w.caBacked() || w.prevReencrypting(); reenc != want {
			rt.Fatalf("anchor %d at revision %d, its request %d CA-backed %t, listed %t, recorded %v: status.engineTLS %v, want reencrypting %t",
				w.anchor, w.anchorRevision(), w.anchorRequest, w.anchorCA, w.resolved == 0, w.prevTLS, et, want)
		}
	case 4:
		if !cmp.Equal(anyOf(et), anyOf(w.prevTLS)) {
			rt.Fatalf("an invalid spec moved status.engineTLS from %v to %v", w.prevTLS, et)
		}
	}
	if et != nil && w.prevTLS != nil && et["createdAt"] != w.prevTLS["createdAt"] {
		rt.Fatalf("status.engineTLS createdAt moved from %v to %v", w.prevTLS["createdAt"], et["createdAt"])
	}
	if published := c.engineState.EngineTLS != nil; published != (reenc && w.spec >= 2) {
		rt.Fatalf("engine-state publishes engineTLS %+v, status.engineTLS %v for spec %s", c.engineState.EngineTLS, et, engineTLSWorldSpecs[w.spec])
	}
	return reenc
}

// TestEngineTLSProperties runs drawn instances through RunFunction: a
// call, then, when the gateway is rendered, one more with the Deployment
// running (or rolling to) what it rendered and the bundle it rendered
// observed. Whatever the engines publish (under any name) and whatever
// the CertificateRequests hold, the function answers, routes every
// routable engine only to its own Services, trusts as rolled only CAs
// every pod runs, mounts nothing but CA certificates, answers every
// bundle a gateway template mounts, and drops no observed bundle while
// some pod may not run the rendered hash.
func TestEngineTLSProperties(t *testing.T) {
	var served, reencrypting, narrowed, keptOld, droppedOld, frozenMounted int
	rapid.Check(t, func(rt *rapid.T) {
		w := drawEngineTLSWorld(t, rt)
		gw := w.observedGateway(t)
		req := w.request(t, gw, nil)
		c := w.call(t, rt, req)
		w.check(t, rt, req, c, gw, gw != nil)
		if w.checkStatus(rt, c) {
			reencrypting++
		}
		frozen := strings.HasPrefix(c.conds["GatewayReady"].GetMessage(), "the gateway keeps its configuration")
		if frozen && len(mountedBundles(gw)) > 0 {
			frozenMounted++
		}
		if len(w.oldBundle) > 0 && c.resources[bundleRN(w.oldBundle...)] != nil && len(mountedBundles(c.resources["gateway"])) > 0 &&
			mountedBundles(c.resources["gateway"])[0] != bundleName(w.oldBundle...) {
			keptOld++
		}
		if (w.gateway != 2 && w.gateway != 3) || frozen {
			return
		}
		d := obj(c.resources["gateway"])
		if w.gateway == 2 {
			gw = rolledOut(t, d)
		} else {
			gw = d.with(t, "metadata.generation", 3, "status", map[string]any{"observedGeneration": 2, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 3, "availableReplicas": 3})
		}
		rendered := map[string]obj{}
		for rn, b := range c.bundles() {
			if mb := mountedBundles(c.resources["gateway"]); len(mb) == 1 && str(b, "metadata", "name") == mb[0] {
				rendered[rn] = b
			}
		}
		if cm := c.resources["gateway-config"]; cm != nil && rapid.Bool().Draw(rt, "config applied") {
			rendered["gateway-config"] = cm
		}
		req = w.request(t, gw, rendered)
		c2 := w.call(t, rt, req)
		if c2.hash() != c.hash() {
			rt.Fatalf("the same inputs rendered two config hashes: %s, then %s with the first observed", c.hash(), c2.hash())
		}
		w.check(t, rt, req, c2, gw, w.gateway == 2)
		w.checkStatus(rt, c2)
		if w.gateway == 2 {
			served++
			if len(w.oldBundle) > 0 && rendered[bundleRN(w.oldBundle...)] == nil && c2.resources[bundleRN(w.oldBundle...)] == nil {
				droppedOld++
			}
		}
		if len(strs(c2.status["rolledEngineTrustCAs"])) < len(w.prevTrust) {
			narrowed++
		}
	})
	if served == 0 || reencrypting == 0 || narrowed == 0 || keptOld == 0 || droppedOld == 0 || frozenMounted == 0 {
		t.Fatalf("the draws never reached a served rendering (%d), a reencrypting status (%d), a narrowed trust (%d), an old bundle kept beside a new one (%d), an old bundle dropped once served (%d) or a frozen gateway mounting a bundle (%d)",
			served, reencrypting, narrowed, keptOld, droppedOld, frozenMounted)
	}
	t.Logf("%d served renderings, %d reencrypting, %d narrowed trusts, %d old bundles kept, %d dropped, %d frozen with a mounted bundle",
		served, reencrypting, narrowed, keptOld, droppedOld, frozenMounted)
}
