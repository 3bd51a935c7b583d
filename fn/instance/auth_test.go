package instance_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// authNow is the clock of every auth case.
var authNow = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

const (
	authSpec = `
metadata: {}
gateway: {}
auth:
  enabled: true
  local:
    passwordLogin: admin_only
    admin: {name: firebolt, password: {name: admin-pw, key: password}}
    signingAlgorithm: ES384
    signingKeys:
      certManager: {issuerRef: {name: internal-ca, kind: ClusterIssuer}, algorithm: ECDSA, size: 384}
`
	rotatingAuthSpec = authSpec + `      rotationInterval: 720h
      retainDuration: 25h
`
	adminVersion = "41"
	fleetPoll    = 30 * time.Second
)

// authFunction is the instance composer at authNow.
func authFunction(t *testing.T) *fn.Function {
	return fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
		v1alpha1.XFireboltInstanceKind: instance.New(instance.WithPasswordGenerator(noPassword(t)),
			instance.WithClock(func() time.Time { return authNow })),
	})
}

// signingKey is a public key cert-manager issued, as its
// CertificateRequest shows it: a certificate over it and its fingerprint.
type signingKey struct {
	certPEM     string
	fingerprint string
}

func newSigningKey(t *testing.T) signingKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "firebolt-jwt-signing"},
		NotBefore: authNow.Add(-time.Hour), NotAfter: authNow.Add(365 * 24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return signingKey{certPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), fingerprint: hex.EncodeToString(sum[:])}
}

// certificateRequest is the CertificateRequest of a key's first revision.
func (k signingKey) certificateRequest(t *testing.T, certificate string) obj {
	return parse(t, `
apiVersion: cert-manager.io/v1
kind: CertificateRequest
metadata: {name: `+certificate+`-1, namespace: firebolt}
spec: {request: ""}
`).with(t, "status.certificate", b64(k.certPEM))
}

// wantCertificate is key id's Certificate as the instance composes it.
func wantCertificate(t *testing.T, id string) obj {
	name := signing.CertificateName(claim, id)
	return parse(t, `
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: `+name+`
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: auth-signing}
spec:
  secretName: `+name+`
  commonName: firebolt-jwt-signing
  usages: [digital signature]
  duration: 8760h0m0s
  renewBefore: 2880h0m0s
  issuerRef: {name: internal-ca, kind: ClusterIssuer, group: cert-manager.io}
  privateKey: {rotationPolicy: Never, encoding: PKCS8, algorithm: ECDSA, size: 384}
  secretTemplate:
    labels: {firebolt.io/instance: demo, firebolt.io/component: auth-signing}
`)
}

// issuedCertificate is key id's Certificate once cert-manager issued it.
func issuedCertificate(t *testing.T, id string) obj {
	return wantCertificate(t, id).with(t,
		"metadata.annotations", map[string]any{"crossplane.io/composition-resource-name": "auth-" + id},
		"metadata.generation", 1,
		"status", map[string]any{"revision": 1, "conditions": []any{map[string]any{"type": "Ready", "status": "True", "observedGeneration": 1}}})
}

func adminSecret(t *testing.T, data map[string]any) obj {
	return parse(t, `{apiVersion: v1, kind: Secret, metadata: {name: admin-pw, namespace: firebolt, resourceVersion: "`+adminVersion+`"}}`).with(t, "data", data)
}

// routing is an engine's routing Service publishing the auth hash it runs.
func routing(t *testing.T, engine, hash string) obj {
	o := parse(t, `
apiVersion: v1
kind: Service
metadata:
  name: `+engine+`-service
  namespace: firebolt
  labels: {firebolt.io/engine: `+engine+`, firebolt.io/instance: demo, firebolt.io/component: engine-routing}
`)
	if hash != "" {
		o = o.with(t, "metadata.annotations", map[string]any{"firebolt.io/observed-auth-hash": hash})
	}
	return o
}

// engineHash is the hash engines publish when they run keys of spec.
func engineHash(t *testing.T, spec string, keys ...v1alpha1.SigningKeyStatus) string {
	t.Helper()
	var s struct {
		Auth v1alpha1.AuthSpec `json:"auth"`
	}
	if err := jsonInto(parse(t, spec), &s); err != nil {
		t.Fatal(err)
	}
	return signing.EngineAuth{Spec: s.Auth, Keys: keys, AdminSecretVersion: adminVersion}.Hash()
}

func authRequirements(extra map[string]*fnv1.ResourceSelector) map[string]*fnv1.ResourceSelector {
	ns := namespace
	r := map[string]*fnv1.ResourceSelector{
		"auth-admin-secret": {ApiVersion: "v1", Kind: "Secret", Namespace: &ns, Match: &fnv1.ResourceSelector_MatchName{MatchName: "admin-pw"}},
		"auth-engines":      enginesSelector(),
	}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

func enginesSelector() *fnv1.ResourceSelector {
	ns := namespace
	return &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Service", Namespace: &ns,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
			"firebolt.io/instance": "demo", "firebolt.io/component": "engine-routing"}}}}
}

func requestSelector(name string) *fnv1.ResourceSelector {
	ns := namespace
	return &fnv1.ResourceSelector{ApiVersion: "cert-manager.io/v1", Kind: "CertificateRequest", Namespace: &ns,
		Match: &fnv1.ResourceSelector_MatchName{MatchName: name}}
}

// key is a key of status.auth as the instance records it.
func key(id, phase string, fp string, createdAt time.Time, extra ...any) map[string]any {
	k := map[string]any{"id": id, "secretName": signing.CertificateName(claim, id), "createdAt": createdAt.Format(time.RFC3339),
		"observedPublicKeyFingerprint": fp, "algorithm": "ECDSA", "size": 384, "phase": phase}
	for i := 0; i < len(extra); i += 2 {
		k[extra[i].(string)] = extra[i+1] //nolint:forcetypeassert // Test keys are strings.
	}
	return k
}

func keyStatus(id, phase, fp string) v1alpha1.SigningKeyStatus {
	return v1alpha1.SigningKeyStatus{ID: id, SecretName: signing.CertificateName(claim, id), ObservedPublicKeyFingerprint: fp, Phase: v1alpha1.SigningKeyPhase(phase)}
}

func TestRunFunctionAuth(t *testing.T) {
	k1, k2 := newSigningKey(t), newSigningKey(t)
	ready := func(*testing.T) obj { return status("Ready", derivedID, true, true) }
	readyStatus := `{phase: Ready, id: ` + derivedID + `}`
	created := authNow.Add(-40 * 24 * time.Hour)
	base := func(t *testing.T) map[string]obj {
		return merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), wantGateway(t))
	}
	withStatus := func(t *testing.T, auth map[string]any) string {
		t.Helper()
		return readyStatus[:len(readyStatus)-1] + `, auth: ` + mustJSON(t, auth) + `}`
	}
	twoKeys := map[string]any{"signingKeyGeneration": 2, "signingKeys": []any{
		key("signing-1", "Active", k1.fingerprint, created),
		key("signing-2", "ValidationOnly", k2.fingerprint, authNow.Add(-time.Hour)),
	}}
	adminOK := func(t *testing.T) []obj { return []obj{adminSecret(t, map[string]any{"password": b64("s3cret")})} }
	twoCertificates := func(t *testing.T) map[string]obj {
		return map[string]obj{"auth-signing-1": issuedCertificate(t, "signing-1"), "auth-signing-2": issuedCertificate(t, "signing-2")}
	}
	twoRequests := func(t *testing.T) map[string][]obj {
		return map[string][]obj{
			"auth-certificate-request-signing-1": {k1.certificateRequest(t, "demo-auth-signing")},
			"auth-certificate-request-signing-2": {k2.certificateRequest(t, "demo-auth-signing-signing-2")},
		}
	}
	both := []v1alpha1.SigningKeyStatus{keyStatus("signing-1", "Active", k1.fingerprint), keyStatus("signing-2", "ValidationOnly", k2.fingerprint)}

	cases := map[string]struct {
		reason string
		req    func(t *testing.T) request
		want   func(t *testing.T) want
	}{
		"AdminSecretNotFetchedYet": {
			reason: "Before Crossplane has fetched the admin Secret, no Certificate is composed, AuthReady waits and the instance looks again in 30 s.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, authSpec, readyStatus), observed: observedRunning(t)}
			},
			want: func(t *testing.T) want {
				res := base(t)
				return want{
					status: ready(t).with(t, "auth", map[string]any{}), ready: true, resources: res, readyRes: allReady(keys(res)...),
					conditions:   conditionsReady(),
					auth:         cond("AuthReady", false, "AdminSecretMissing", "waiting for Crossplane to fetch Secret admin-pw"),
					requirements: authRequirements(nil), ttl: fleetPoll,
				}
			},
		},
		"AdminSecretWithoutKey": {
			reason: "An admin Secret without the named key is reported by field, and the password is never generated.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, authSpec, readyStatus), observed: observedRunning(t), required: map[string][]obj{
					"auth-admin-secret": {adminSecret(t, map[string]any{"other": b64("x")})}, "auth-engines": nil,
				}}
			},
			want: func(t *testing.T) want {
				res := base(t)
				return want{
					status: ready(t).with(t, "auth", map[string]any{}), ready: true, resources: res, readyRes: allReady(keys(res)...),
					conditions: conditionsReady(),
					auth: cond("AuthReady", false, "AdminSecretMissing",
						`spec.auth.local.admin.password: Secret firebolt/admin-pw has no non-empty key "password"; create it (the password is never generated)`),
					requirements: authRequirements(nil), ttl: fleetPoll,
				}
			},
		},
		"FirstKeyRequested": {
			reason: "With the admin Secret in place the first key's Certificate is composed; nothing is recorded until cert-manager issues it.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, authSpec, readyStatus), observed: observedRunning(t), required: map[string][]obj{
					"auth-admin-secret": adminOK(t), "auth-engines": nil,
				}}
			},
			want: func(t *testing.T) want {
				res := base(t)
				rr := allReady(keys(res)...)
				res["auth-signing-1"] = wantCertificate(t, "signing-1")
				return want{
					status: ready(t).with(t, "auth", map[string]any{}), ready: true, resources: res, readyRes: rr,
					conditions: conditionsReady(),
					auth: cond("AuthReady", false, "SigningKeyPending",
						"waiting for cert-manager to issue signing key signing-1 (Certificate demo-auth-signing)"),
					requirements: authRequirements(nil), ttl: stableTTL,
				}
			},
		},
		"FirstKeyIssued": {
			reason: "Once the Certificate is Ready and its CertificateRequest names the public key, the key is recorded Active with its fingerprint and AuthReady turns True. No Secret of a key is ever asked for.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["auth-signing-1"] = issuedCertificate(t, "signing-1")
				return request{xr: xr(t, authSpec, readyStatus), observed: o, required: map[string][]obj{
					"auth-admin-secret": adminOK(t), "auth-engines": nil,
					"auth-certificate-request-signing-1": {k1.certificateRequest(t, "demo-auth-signing")},
				}}
			},
			want: func(t *testing.T) want {
				res := base(t)
				res["auth-signing-1"] = wantCertificate(t, "signing-1")
				return want{
					status: ready(t).with(t, "auth", map[string]any{"signingKeyGeneration": 1, "signingKeys": []any{key("signing-1", "Active", k1.fingerprint, authNow)}}),
					ready:  true, resources: res, readyRes: allReady(keys(res)...),
					conditions: conditionsReady(),
					auth:       cond("AuthReady", true, "Ready", "signing keys: signing-1 Active"),
					results:    []*fnv1.Result{result(fnv1.Severity_SEVERITY_NORMAL, "SigningKeyCreated", "signing key signing-1 is issued and signs tokens")},
					requirements: authRequirements(map[string]*fnv1.ResourceSelector{
						"auth-certificate-request-signing-1": requestSelector("demo-auth-signing-1"),
					}),
					ttl: stableTTL,
				}
			},
		},
		"PromotionWaitsForALaggingEngine": {
			reason: "A minted key is promoted only once every engine validates it: with one engine still on the old key set, AuthReady names the step and the engine, and the instance looks again in 30 s.",
			req: func(t *testing.T) request {
				o := merge(observedRunning(t), twoCertificates(t))
				req := twoRequests(t)
				req["auth-admin-secret"] = adminOK(t)
				req["auth-engines"] = []obj{
					routing(t, "e1", engineHash(t, rotatingAuthSpec, both...)),
					routing(t, "e2", engineHash(t, rotatingAuthSpec, both[0])),
				}
				return request{xr: xr(t, rotatingAuthSpec, withStatus(t, twoKeys)), observed: o, required: req}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), map[string]obj{"auth-signing-1": wantCertificate(t, "signing-1"), "auth-signing-2": wantCertificate(t, "signing-2")})
				st := map[string]any{"signingKeyGeneration": 2, "signingKeys": twoKeys["signingKeys"],
					"pendingRotationStep": "AwaitingPromotion", "pendingSince": authNow.Format(time.RFC3339),
					"laggingEngines": []any{"e2"}, "laggingEngineCount": 1}
				return want{
					status: ready(t).with(t, "auth", st), ready: true, resources: res, readyRes: allReady(keys(res)...),
					conditions: conditionsReady(),
					auth: cond("AuthReady", true, "RotationWaitingForEngines",
						"rotation step AwaitingPromotion waits for 1 engine(s) to run the current keys (signing-1 Active, signing-2 ValidationOnly): e2"),
					requirements: authRequirements(map[string]*fnv1.ResourceSelector{
						"auth-certificate-request-signing-1": requestSelector("demo-auth-signing-1"),
						"auth-certificate-request-signing-2": requestSelector("demo-auth-signing-signing-2-1"),
					}),
					ttl: fleetPoll,
				}
			},
		},
		"StalledRotationWarns": {
			reason: "A step that has waited 15 minutes or more warns on every call, naming the engines, and keeps its start time.",
			req: func(t *testing.T) request {
				o := merge(observedRunning(t), twoCertificates(t))
				req := twoRequests(t)
				req["auth-admin-secret"] = adminOK(t)
				req["auth-engines"] = []obj{routing(t, "e1", engineHash(t, rotatingAuthSpec, both[0]))}
				st := map[string]any{"signingKeyGeneration": 2, "signingKeys": twoKeys["signingKeys"],
					"pendingRotationStep": "AwaitingPromotion", "pendingSince": authNow.Add(-20 * time.Minute).Format(time.RFC3339),
					"laggingEngines": []any{"e1"}, "laggingEngineCount": 1}
				return request{xr: xr(t, rotatingAuthSpec, withStatus(t, st)), observed: o, required: req}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), map[string]obj{"auth-signing-1": wantCertificate(t, "signing-1"), "auth-signing-2": wantCertificate(t, "signing-2")})
				st := map[string]any{"signingKeyGeneration": 2, "signingKeys": twoKeys["signingKeys"],
					"pendingRotationStep": "AwaitingPromotion", "pendingSince": authNow.Add(-20 * time.Minute).Format(time.RFC3339),
					"laggingEngines": []any{"e1"}, "laggingEngineCount": 1}
				return want{
					status: ready(t).with(t, "auth", st), ready: true, resources: res, readyRes: allReady(keys(res)...),
					conditions: conditionsReady(),
					auth: cond("AuthReady", true, "RotationWaitingForEngines",
						"rotation step AwaitingPromotion waits for 1 engine(s) to run the current keys (signing-1 Active, signing-2 ValidationOnly): e1"),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "SigningKeyRotationStalled",
						"rotation step AwaitingPromotion has waited 20m0s for 1 engine(s) to run the current keys: e1")},
					requirements: authRequirements(map[string]*fnv1.ResourceSelector{
						"auth-certificate-request-signing-1": requestSelector("demo-auth-signing-1"),
						"auth-certificate-request-signing-2": requestSelector("demo-auth-signing-signing-2-1"),
					}),
					ttl: fleetPoll,
				}
			},
		},
		"PromotedOnceEveryEngineValidates": {
			reason: "With both engines on both keys the new key signs and the old one only validates, stamped with its demotion.",
			req: func(t *testing.T) request {
				o := merge(observedRunning(t), twoCertificates(t))
				req := twoRequests(t)
				req["auth-admin-secret"] = adminOK(t)
				req["auth-engines"] = []obj{
					routing(t, "e1", engineHash(t, rotatingAuthSpec, both...)),
					routing(t, "e2", engineHash(t, rotatingAuthSpec, both...)),
				}
				return request{xr: xr(t, rotatingAuthSpec, withStatus(t, twoKeys)), observed: o, required: req}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), map[string]obj{"auth-signing-1": wantCertificate(t, "signing-1"), "auth-signing-2": wantCertificate(t, "signing-2")})
				st := map[string]any{"signingKeyGeneration": 2, "signingKeys": []any{
					key("signing-1", "ValidationOnly", k1.fingerprint, created, "demotedAt", authNow.Format(time.RFC3339)),
					key("signing-2", "Active", k2.fingerprint, authNow.Add(-time.Hour)),
				}}
				return want{
					status: ready(t).with(t, "auth", st), ready: true, resources: res, readyRes: allReady(keys(res)...),
					conditions: conditionsReady(),
					auth:       cond("AuthReady", true, "Ready", "signing keys: signing-1 ValidationOnly, signing-2 Active"),
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_NORMAL, "SigningKeyPromoted",
						"signing key signing-2 signs tokens; signing-1 only validates them now")},
					requirements: authRequirements(map[string]*fnv1.ResourceSelector{
						"auth-certificate-request-signing-1": requestSelector("demo-auth-signing-1"),
						"auth-certificate-request-signing-2": requestSelector("demo-auth-signing-signing-2-1"),
					}),
					ttl: stableTTL,
				}
			},
		},
		"RetainBetweenMaxTokenAgeAndTheFloor": {
			reason: "The original's example keeps a demoted key 24h with the default 24h maxTokenAge and 30s skew: admitted, the key is kept the 24h30s a token can live, and AuthReady says so.",
			req: func(t *testing.T) request {
				spec := authSpec + "      rotationInterval: 720h\n      retainDuration: 24h\n"
				o := observedRunning(t)
				o["auth-signing-1"] = issuedCertificate(t, "signing-1")
				st := map[string]any{"signingKeyGeneration": 1, "signingKeys": []any{key("signing-1", "Active", k1.fingerprint, authNow.Add(-24*time.Hour))}}
				return request{xr: xr(t, spec, withStatus(t, st)), observed: o, required: map[string][]obj{
					"auth-admin-secret": adminOK(t), "auth-engines": nil,
					"auth-certificate-request-signing-1": {k1.certificateRequest(t, "demo-auth-signing")},
				}}
			},
			want: func(t *testing.T) want {
				res := base(t)
				res["auth-signing-1"] = wantCertificate(t, "signing-1")
				return want{
					status: ready(t).with(t, "auth", map[string]any{"signingKeyGeneration": 1, "signingKeys": []any{key("signing-1", "Active", k1.fingerprint, authNow.Add(-24*time.Hour))}}),
					ready:  true, resources: res, readyRes: allReady(keys(res)...),
					conditions: conditionsReady(),
					auth:       cond("AuthReady", true, "Ready", "signing keys: signing-1 Active; a demoted key is kept 24h0m30s (maxTokenAge + clockSkewTolerance), not retainDuration 24h0m0s, so no valid token is rejected"),
					requirements: authRequirements(map[string]*fnv1.ResourceSelector{
						"auth-certificate-request-signing-1": requestSelector("demo-auth-signing-1"),
					}),
					ttl: stableTTL,
				}
			},
		},
		"InvalidSpecKeepsTheKeys": {
			reason: "A retainDuration shorter than maxTokenAge + clockSkewTolerance is refused by field; the keys and their Certificates stay as they are.",
			req: func(t *testing.T) request {
				spec := authSpec + "      rotationInterval: 720h\n      retainDuration: 1h\n"
				o := merge(observedRunning(t), twoCertificates(t))
				return request{xr: xr(t, spec, withStatus(t, twoKeys)), observed: o}
			},
			want: func(t *testing.T) want {
				res := merge(base(t), map[string]obj{
					"auth-signing-1": frozenObj(t, issuedCertificate(t, "signing-1")),
					"auth-signing-2": frozenObj(t, issuedCertificate(t, "signing-2")),
				})
				return want{
					status: ready(t).with(t, "auth", twoKeys), ready: true, resources: res, readyRes: allReady(keys(res)...),
					conditions: conditionsReady(),
					auth: cond("AuthReady", false, "AuthSpecInvalid",
						"spec.auth.local.signingKeys.retainDuration: 1h0m0s must be at least maxTokenAge (24h0m0s), or a token signed just before its key was demoted is rejected before it expires"),
					ttl: stableTTL,
				}
			},
		},
		"DisabledKeepsKeysAnEngineRuns": {
			reason: "Auth turned off: AuthReady says Disabled, status keeps only the key counter, and the Certificate stays while an engine still runs the key.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["auth-signing-1"] = issuedCertificate(t, "signing-1")
				st := map[string]any{"signingKeyGeneration": 1, "signingKeys": []any{key("signing-1", "Active", k1.fingerprint, created)}}
				return request{xr: xr(t, `{metadata: {}, gateway: {}, auth: {enabled: false}}`, withStatus(t, st)), observed: o,
					required: map[string][]obj{"auth-engines": {routing(t, "e1", "0123456789abcdef"), routing(t, "e2", "")}}}
			},
			want: func(t *testing.T) want {
				res := base(t)
				rr := allReady(keys(res)...)
				res["auth-signing-1"] = frozenObj(t, issuedCertificate(t, "signing-1"))
				rr["auth-signing-1"] = true
				return want{
					status: ready(t).with(t, "auth", map[string]any{"signingKeyGeneration": 1}), ready: true, resources: res, readyRes: rr,
					conditions:   conditionsReady(),
					requirements: map[string]*fnv1.ResourceSelector{"auth-engines": enginesSelector()},
					ttl:          fleetPoll,
				}
			},
		},
		"DisabledDropsKeysNoEngineRuns": {
			reason: "Once no engine runs auth, the Certificate is left out and Crossplane deletes it.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				o["auth-signing-1"] = issuedCertificate(t, "signing-1")
				st := map[string]any{"signingKeyGeneration": 1, "signingKeys": []any{key("signing-1", "Active", k1.fingerprint, created)}}
				return request{xr: xr(t, `{metadata: {}, gateway: {}, auth: {enabled: false}}`, withStatus(t, st)), observed: o,
					required: map[string][]obj{"auth-engines": {routing(t, "e1", ""), routing(t, "e2", "")}}}
			},
			want: func(t *testing.T) want {
				res := base(t)
				return want{
					status: ready(t).with(t, "auth", map[string]any{"signingKeyGeneration": 1}), ready: true, resources: res, readyRes: allReady(keys(res)...),
					conditions:   conditionsReady(),
					requirements: map[string]*fnv1.ResourceSelector{"auth-engines": enginesSelector()},
					ttl:          stableTTL,
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := authFunction(t).RunFunction(context.Background(), tc.req(t).build(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(t).build(t), withoutEngineState(t, rsp), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func jsonInto(o obj, into any) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
