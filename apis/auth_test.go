package apis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// authFixture is testdata/original-shapes/instance-auth.yaml, the auth of
// the original operator's auth example, changed by muts.
func authFixture(muts ...func(map[string]any) map[string]any) func(t *testing.T) map[string]any {
	return func(t *testing.T) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", "original-shapes", "instance-auth.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m := parse(t, string(b))
		for _, f := range muts {
			m = f(m)
		}
		return m
	}
}

// provider is an OIDC provider with the fixture's discovery URL.
func provider(name, mapping string) map[string]any {
	return map[string]any{
		"name":            name,
		"discoveryURL":    "https://" + name + ".example.com/.well-known/openid-configuration",
		"usernameMapping": mapping,
	}
}

func providers(ps ...map[string]any) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, p)
	}
	return out
}

// key sets the signing algorithm and the key it is issued with.
func key(signingAlgorithm, algorithm string, size int64) func(map[string]any) map[string]any {
	return func(m map[string]any) map[string]any {
		set(m, "spec.auth.local.signingAlgorithm", signingAlgorithm)
		set(m, "spec.auth.local.signingKeys.certManager.algorithm", algorithm)
		return set(m, "spec.auth.local.signingKeys.certManager.size", size)
	}
}

// TestAuthClaims has one case per admission rule of spec.auth: the
// original operator's CRD markers and those of its webhook rules that need
// nothing but the object. Every refusal names the field it is about.
func TestAuthClaims(t *testing.T) {
	const kind = "FireboltInstance"
	a := authFixture
	const (
		local      = "spec.auth.local"
		keys       = "spec.auth.local.signingKeys"
		certMgr    = "spec.auth.local.signingKeys.certManager"
		oidc       = "spec.auth.oidc"
		provider0  = "spec.auth.oidc.providers[0]"
		preferred  = "spec.auth.preferredAuthorizationServer"
		mustUnset  = `spec.auth: Invalid value: spec.auth.local, spec.auth.oidc and spec.auth.preferredAuthorizationServer must be unset while spec.auth.enabled is false`
		rsES       = `spec.auth.local: Invalid value: spec.auth.local.signingAlgorithm: RS256, RS384 and RS512 need signingKeys.certManager.algorithm RSA; ES256, ES384 and ES512 need ECDSA`
		esSize     = `spec.auth.local: Invalid value: spec.auth.local.signingKeys.certManager.size must match signingAlgorithm: 256 for ES256, 384 for ES384, 521 for ES512`
		sizeSet    = `spec.auth.local.signingKeys.certManager.size: Invalid value: size must be 2048, 4096 or 8192 for RSA and 256, 384 or 521 for ECDSA, as cert-manager accepts`
		together   = `spec.auth.local.signingKeys: Invalid value: spec.auth.local.signingKeys: rotationInterval and retainDuration are set together: retainDuration is how long a demoted key keeps validating tokens`
		preferredE = `spec.auth: Invalid value: spec.auth.preferredAuthorizationServer must be _local or the name of one of spec.auth.oidc.providers`
	)
	cases := map[string]struct {
		reason string
		obj    func(t *testing.T) map[string]any
		old    func(t *testing.T) map[string]any
		// field is named by every error.
		field  string
		errors []string
	}{
		// What is accepted.
		"Fixture": {
			reason: "The auth of the original's example is valid.",
			obj:    a(),
		},
		"Unchanged": {
			reason: "An update that changes nothing passes every transition rule.",
			obj:    a(), old: a(),
		},
		"EnabledLater": {
			reason: "Auth may be turned on for an instance that had none.",
			obj:    a(), old: a(delf("spec.auth")),
		},
		"DisabledBare": {
			reason: "A disabled auth without settings applies.",
			obj:    a(setf("spec.auth", map[string]any{"enabled": false})),
		},
		"LocalOnly": {
			reason: "OIDC is optional; _local is a valid preferred server.",
			obj:    a(delf("spec.auth.oidc"), setf(preferred, "_local")),
		},
		"NoPreferredServer": {
			reason: "preferredAuthorizationServer is optional.",
			obj:    a(delf(preferred)),
		},
		"PreferredServerEmpty": {
			reason: "An empty preferredAuthorizationServer is as good as none, enabled or not.",
			obj:    a(setf(preferred, "")),
		},
		"DisabledWithEmptyPreferredServer": {
			reason: "An empty preferredAuthorizationServer is as good as none, enabled or not.",
			obj:    a(setf("spec.auth", map[string]any{"enabled": false, "preferredAuthorizationServer": ""})),
		},
		"NoRotation": {
			reason: "Without rotationInterval and retainDuration one permanent key is kept.",
			obj:    a(delf(keys+".rotationInterval"), delf(keys+".retainDuration")),
		},
		"AnyUser": {
			reason: "any_user is the other passwordLogin.",
			obj:    a(setf(local+".passwordLogin", "any_user")),
		},
		"NamespacedIssuer": {
			reason: "An Issuer may sign the keys.",
			obj:    a(setf(certMgr+".issuerRef.kind", "Issuer")),
		},
		"RSALargerKeys": {
			reason: "RS512 with an 8192-bit RSA key.",
			obj:    a(key("RS512", "RSA", 8192)),
		},
		"ES512": {
			reason: "ES512 goes with the 521-bit curve.",
			obj:    a(key("ES512", "ECDSA", 521)),
		},
		"ES256": {
			reason: "ES256 goes with the 256-bit curve.",
			obj:    a(key("ES256", "ECDSA", 256)),
		},
		"TwoProvidersWithIss": {
			reason: "Several providers whose user names carry the issuer.",
			obj: a(setf(oidc+".providers", providers(
				provider("okta", "{{ iss }}/{{ email }}"), provider("azure", "{{ iss }}:{{ sub }}")))),
		},

		// spec.auth.
		"EnabledWithoutLocal": {
			reason: "An enabled auth needs the local authorization server.",
			obj:    a(delf(local)),
			field:  local,
			errors: []string{`spec.auth: Invalid value: spec.auth.local is required when spec.auth.enabled is true`},
		},
		"DisabledWithLocal": {
			reason: "A disabled auth may not carry local settings.",
			obj:    a(setf("spec.auth.enabled", false), delf(oidc), delf(preferred)),
			field:  local,
			errors: []string{mustUnset},
		},
		"DisabledWithOIDC": {
			reason: "A disabled auth may not carry OIDC providers.",
			obj:    a(setf("spec.auth.enabled", false), delf(local), delf(preferred)),
			field:  oidc,
			errors: []string{mustUnset},
		},
		"DisabledWithPreferredServer": {
			reason: "A disabled auth may not name a preferred server.",
			obj:    a(setf("spec.auth.enabled", false), delf(local), delf(oidc), setf(preferred, "_local")),
			field:  preferred,
			errors: []string{mustUnset},
		},
		"PreferredServerUnknown": {
			reason: "The preferred server is _local or a provider's name.",
			obj:    a(setf(preferred, "github")),
			field:  preferred,
			errors: []string{preferredE},
		},
		"PreferredServerWithoutOIDC": {
			reason: "A provider's name without providers names nothing.",
			obj:    a(delf(oidc)),
			field:  preferred,
			errors: []string{preferredE},
		},

		// spec.auth.local.
		"PasswordLoginUnknown": {
			reason: "passwordLogin is admin_only or any_user.",
			obj:    a(setf(local+".passwordLogin", "everyone")),
			field:  local + ".passwordLogin",
			errors: []string{`spec.auth.local.passwordLogin: Unsupported value: "everyone": supported values: "admin_only", "any_user"`},
		},
		"AdminNameEmpty": {
			reason: "The admin has a name.",
			obj:    a(setf(local+".admin.name", "")),
			field:  local + ".admin.name",
			errors: []string{`spec.auth.local.admin.name: Invalid value: "": spec.auth.local.admin.name in body should be at least 1 chars long`},
		},
		"AdminPasswordMissing": {
			reason: "The admin password is never generated: its Secret is required.",
			obj:    a(delf(local + ".admin.password")),
			field:  local + ".admin.password",
			errors: []string{`spec.auth.local.admin.password: Required value`},
		},
		"AdminPasswordNameEmpty": {
			reason: "The admin password's Secret is named.",
			obj:    a(setf(local+".admin.password.name", "")),
			field:  local + ".admin.password",
			errors: []string{`spec.auth.local.admin.password: Invalid value: spec.auth.local.admin.password: the name and key of the Secret holding the administrator's password are required`},
		},
		"SigningKeysMissing": {
			reason: "An enabled auth signs with keys from cert-manager: signingKeys is required.",
			obj:    a(delf(keys)),
			field:  keys,
			errors: []string{`spec.auth.local: Invalid value: spec.auth.local.signingKeys is required: the keys engines sign tokens with`},
		},
		"CertificateDurationInDays": {
			reason: "A Certificate's duration is a Go duration: refused at admission, not left for the function to fail decoding.",
			obj:    a(setf(keys+".certManager.duration", "365d")),
			field:  keys + ".certManager.duration",
			errors: []string{`spec.auth.local.signingKeys.certManager.duration: Invalid value: certManager.duration must be a Go duration such as 720h or 90m (units ns, us, ms, s, m, h; no d)`},
		},
		"CertificateRenewBeforeValid": {
			reason: "Go durations with several units and fractions are admitted.",
			obj:    a(setf(keys+".certManager.duration", "8760h"), setf(keys+".certManager.renewBefore", "1h30m0.5s")),
		},
		"AdminPasswordKeyMissing": {
			reason: "The Secret's key is required.",
			obj:    a(delf(local + ".admin.password.key")),
			field:  local + ".admin.password.key",
			errors: []string{`spec.auth.local.admin.password.key: Required value`},
		},
		"SigningAlgorithmUnknown": {
			reason: "Only the RS and ES algorithms sign tokens.",
			obj:    a(key("HS256", "ECDSA", 384)),
			field:  local + ".signingAlgorithm",
			errors: []string{`spec.auth.local.signingAlgorithm: Unsupported value: "HS256": supported values: "RS256", "RS384", "RS512", "ES256", "ES384", "ES512"`},
		},
		"RSWithECDSAKey": {
			reason: "An RS algorithm needs an RSA key.",
			obj:    a(key("RS256", "ECDSA", 384)),
			field:  local + ".signingAlgorithm",
			errors: []string{rsES},
		},
		"RSWithDefaultKey": {
			reason: "An RS algorithm with the key left to its defaults gets an ECDSA key, which it cannot use.",
			obj:    a(delf(certMgr+".algorithm"), delf(certMgr+".size")),
			field:  local + ".signingAlgorithm",
			errors: []string{rsES},
		},
		"ESWithRSAKey": {
			reason: "An ES algorithm needs an ECDSA key, of its own size.",
			obj:    a(key("ES384", "RSA", 2048)),
			field:  "signingAlgorithm",
			errors: []string{rsES, esSize},
		},
		"ESSizeMismatch": {
			reason: "ES256 needs the 256-bit curve.",
			obj:    a(key("ES256", "ECDSA", 384)),
			field:  certMgr + ".size",
			errors: []string{esSize},
		},
		"ES512With512": {
			reason: "ES512 uses P-521, not a 512-bit curve, which does not exist.",
			obj:    a(key("ES512", "ECDSA", 512)),
			field:  certMgr + ".size",
			errors: []string{sizeSet, esSize},
		},
		"RSASizeUnsupported": {
			reason: "cert-manager issues RSA keys of 2048, 4096 or 8192 bits.",
			obj:    a(setf(certMgr+".size", int64(3072))),
			field:  certMgr + ".size",
			errors: []string{sizeSet},
		},

		// spec.auth.local.signingKeys.
		"SigningKeysCertManagerMissing": {
			reason: "Keys are issued by cert-manager only.",
			obj:    a(delf(certMgr)),
			field:  certMgr,
			errors: []string{`spec.auth.local.signingKeys.certManager: Required value`},
		},
		"SigningKeysCertManagerRemoved": {
			reason: "Removing the issuer is refused as missing, not as an error of the rules that read it.",
			obj:    a(delf(certMgr)), old: a(),
			field:  certMgr,
			errors: []string{`spec.auth.local.signingKeys.certManager: Required value`},
		},
		"SigningKeysCertManagerMissingES": {
			reason: "The same for an ES algorithm, whose size rule reads the issuer too.",
			obj:    a(setf(local+".signingAlgorithm", "ES384"), delf(certMgr)),
			field:  certMgr,
			errors: []string{`spec.auth.local.signingKeys.certManager: Required value`},
		},
		"IssuerNameEmpty": {
			reason: "The issuer has a name.",
			obj:    a(setf(certMgr+".issuerRef.name", "")),
			field:  certMgr + ".issuerRef.name",
			errors: []string{`spec.auth.local.signingKeys.certManager.issuerRef.name: Invalid value: "": spec.auth.local.signingKeys.certManager.issuerRef.name in body should be at least 1 chars long`},
		},
		"IssuerKindUnknown": {
			reason: "The issuer is an Issuer or a ClusterIssuer.",
			obj:    a(setf(certMgr+".issuerRef.kind", "VaultIssuer")),
			field:  certMgr + ".issuerRef.kind",
			errors: []string{`spec.auth.local.signingKeys.certManager.issuerRef.kind: Unsupported value: "VaultIssuer": supported values: "Issuer", "ClusterIssuer"`},
		},
		"AlgorithmUnknown": {
			reason: "The key is RSA or ECDSA; Ed25519 suits neither signing algorithm nor size.",
			obj:    a(setf(certMgr+".algorithm", "Ed25519")),
			field:  "signingKeys.certManager",
			errors: []string{
				`spec.auth.local.signingKeys.certManager.algorithm: Unsupported value: "Ed25519": supported values: "RSA", "ECDSA"`,
				sizeSet, // Not RSA, so the ECDSA sizes apply.
				rsES,
			},
		},
		"RotationWithoutRetain": {
			reason: "A rotated key needs to know how long it is kept once demoted.",
			obj:    a(delf(keys + ".retainDuration")),
			field:  "retainDuration",
			errors: []string{together},
		},
		"RetainWithoutRotation": {
			reason: "retainDuration means nothing without rotation.",
			obj:    a(delf(keys + ".rotationInterval")),
			field:  "rotationInterval",
			errors: []string{together},
		},
		"RotationIntervalZero": {
			reason: "A zero interval would rotate without pause.",
			obj:    a(setf(keys+".rotationInterval", "0s")),
			field:  keys + ".rotationInterval",
			errors: []string{`spec.auth.local.signingKeys: Invalid value: spec.auth.local.signingKeys.rotationInterval must be positive`},
		},
		"RotationIntervalNegative": {
			reason: "rotationInterval is positive.",
			obj:    a(setf(keys+".rotationInterval", "-720h")),
			field:  keys + ".rotationInterval",
			errors: []string{`spec.auth.local.signingKeys: Invalid value: spec.auth.local.signingKeys.rotationInterval must be positive`},
		},
		"RotationIntervalInDays": {
			reason: "rotationInterval is a Go duration, without the d unit of the token lifetimes: refused at admission, not left for the function to fail decoding.",
			obj:    a(setf(keys+".rotationInterval", "30d")),
			field:  keys + ".rotationInterval",
			errors: []string{`spec.auth.local.signingKeys.rotationInterval: Invalid value: spec.auth.local.signingKeys.rotationInterval must be a Go duration such as 720h or 90m (units ns, us, ms, s, m, h; no d)`},
		},
		"RetainDurationNegative": {
			reason: "retainDuration is not negative.",
			obj:    a(setf(keys+".retainDuration", "-24h")),
			field:  keys + ".retainDuration",
			errors: []string{`spec.auth.local.signingKeys: Invalid value: spec.auth.local.signingKeys.retainDuration must not be negative`},
		},
		"RetainDurationInDays": {
			reason: "retainDuration is a Go duration too.",
			obj:    a(setf(keys+".retainDuration", "1d")),
			field:  keys + ".retainDuration",
			errors: []string{`spec.auth.local.signingKeys.retainDuration: Invalid value: spec.auth.local.signingKeys.retainDuration must be a Go duration such as 720h or 90m (units ns, us, ms, s, m, h; no d)`},
		},

		// spec.auth.oidc.
		"ProvidersEmpty": {
			reason: "An oidc block has at least one provider.",
			obj:    a(setf(oidc+".providers", []any{}), setf(preferred, "_local")),
			field:  oidc + ".providers",
			errors: []string{`spec.auth.oidc.providers: Invalid value: 0: spec.auth.oidc.providers in body should have at least 1 items`},
		},
		"ProvidersMissing": {
			reason: "An oidc block has providers.",
			obj:    a(setf(oidc, map[string]any{}), setf(preferred, "_local")),
			field:  oidc + ".providers",
			errors: []string{`spec.auth.oidc.providers: Required value`},
		},
		"ProviderFieldsMissing": {
			reason: "A provider without a name or usernameMapping is refused as missing, not as an error of the rules that read them.",
			obj: a(setf(oidc+".providers", providers(
				map[string]any{"discoveryURL": "https://a.example.com"}, provider("okta", "{{ iss }}/{{ email }}")))),
			field:  "spec.auth.oidc.providers[0]",
			errors: []string{`spec.auth.oidc.providers[0].name: Required value`, `spec.auth.oidc.providers[0].usernameMapping: Required value`},
		},
		"ProviderNameUnderscore": {
			reason: "Names starting with _ are the engine's own, such as _local.",
			obj:    a(setf(provider0+".name", "_okta"), setf(preferred, "_local")),
			field:  provider0 + ".name",
			errors: []string{`spec.auth.oidc.providers[0].name: Invalid value: "_okta": spec.auth.oidc.providers[0].name in body should match '^[^_].*$'`},
		},
		"ProviderNameEmpty": {
			reason: "A provider has a name.",
			obj:    a(setf(provider0+".name", ""), setf(preferred, "_local")),
			field:  provider0 + ".name",
			errors: []string{`spec.auth.oidc.providers[0].name: Invalid value: "": spec.auth.oidc.providers[0].name in body should be at least 1 chars long`},
		},
		"DiscoveryURLNotHTTPS": {
			reason: "The provider's configuration is fetched over HTTPS only.",
			obj:    a(setf(provider0+".discoveryURL", "http://company.okta.com/oauth2/default/.well-known/openid-configuration")),
			field:  provider0 + ".discoveryURL",
			errors: []string{`spec.auth.oidc.providers[0].discoveryURL: Invalid value: "http://company.okta.com/oauth2/default/.well-known/openid-configuration": spec.auth.oidc.providers[0].discoveryURL in body should match '^https://.+'`},
		},
		"DiscoveryURLMissing": {
			reason: "discoveryURL is required.",
			obj:    a(setf(provider0, map[string]any{"name": "okta", "usernameMapping": "{{ email }}"})),
			field:  provider0 + ".discoveryURL",
			errors: []string{`spec.auth.oidc.providers[0].discoveryURL: Required value`},
		},
		"UsernameMappingEmpty": {
			reason: "A user name is built from something.",
			obj:    a(setf(provider0+".usernameMapping", "")),
			field:  provider0 + ".usernameMapping",
			errors: []string{`spec.auth.oidc.providers[0].usernameMapping: Invalid value: "": spec.auth.oidc.providers[0].usernameMapping in body should be at least 1 chars long`},
		},
		"ProviderNamesDuplicate": {
			reason: "Provider names are unique.",
			obj: a(setf(oidc+".providers", providers(
				provider("okta", "{{ iss }}/{{ email }}"), provider("okta", "{{ iss }}/{{ sub }}")))),
			field:  oidc + ".providers",
			errors: []string{`spec.auth.oidc: Invalid value: spec.auth.oidc.providers: names must be unique`},
		},
		"TwoProvidersWithoutIss": {
			reason: "With several providers, a user name without the issuer could name users of two providers.",
			obj: a(setf(oidc+".providers", providers(
				provider("okta", "{{ iss }}/{{ email }}"), provider("azure", "{{ email }}")))),
			field:  oidc + ".providers",
			errors: []string{`spec.auth.oidc: Invalid value: spec.auth.oidc.providers: with more than one provider every usernameMapping must contain {{ iss }}, so users of different providers cannot collide`},
		},

		// Transitions.
		"SigningAlgorithmChanged": {
			reason: "Tokens signed with the old algorithm would no longer validate.",
			obj:    a(setf(local+".signingAlgorithm", "RS512")), old: a(),
			field:  local + ".signingAlgorithm",
			errors: []string{`spec.auth.local: Invalid value: spec.auth.local.signingAlgorithm is immutable once set: tokens signed with the old algorithm would no longer validate`},
		},
		"SigningAlgorithmFromEmpty": {
			reason: "An empty signingAlgorithm may be set.",
			obj:    a(), old: a(setf(local+".signingAlgorithm", "")),
		},
		"SigningKeySizeChanged": {
			reason: "The key size is immutable once set.",
			obj:    a(setf(certMgr+".size", int64(4096))), old: a(),
			field:  certMgr + ".size",
			errors: []string{`spec.auth.local.signingKeys: Invalid value: spec.auth.local.signingKeys.certManager.size is immutable once set`},
		},
		"SigningKeySizeFromZero": {
			reason: "A zero size may be set.",
			obj:    a(), old: a(setf(certMgr+".size", int64(0))),
		},
		"KeyChangedWhileDisabled": {
			reason: "A disabled auth has no local settings, so re-enabling may pick another algorithm and size.",
			obj:    a(key("ES256", "ECDSA", 256)),
			old:    a(setf("spec.auth", map[string]any{"enabled": false})),
		},
	}

	claims := make(map[string]claimCase, len(cases))
	for name, tc := range cases {
		if len(tc.errors) > 0 && tc.field == "" {
			t.Errorf("%s: a refused case names the field its errors must name", name)
		}
		for _, e := range tc.errors {
			if !strings.Contains(e, tc.field) {
				t.Errorf("%s: error %q does not name %s", name, e, tc.field)
			}
		}
		claims[name] = claimCase{reason: tc.reason, kind: kind, obj: tc.obj, old: tc.old, errors: tc.errors}
	}
	runClaims(t, claims)
}

// TestAuthDefaults pins the defaults of an auth that sets only what is
// required: the original's, and a default key that suits the default
// signing algorithm.
func TestAuthDefaults(t *testing.T) {
	in := obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: demo, namespace: firebolt}
spec:
  metadata: {}
  gateway: {}
  auth:
    enabled: true
    local:
      admin:
        password: {name: admin, key: password}
      signingKeys:
        certManager:
          issuerRef: {name: ca}
    oidc:
      providers:
      - name: okta
        discoveryURL: https://okta.example.com/.well-known/openid-configuration
        usernameMapping: "{{ email }}"
        jitProvisioning: {}
`)
	want := obj(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: demo, namespace: firebolt}
spec:
  metadataNG: false
  metadata: {engineRegistration: false}
  gateway: {metricsPort: 9090}
  auth:
    enabled: true
    local:
      passwordLogin: admin_only
      admin:
        name: firebolt
        password: {name: admin, key: password}
      signingAlgorithm: ES384
      signingKeys:
        certManager:
          issuerRef: {name: ca, kind: ClusterIssuer}
          algorithm: ECDSA
          size: 384
    oidc:
      providers:
      - name: okta
        discoveryURL: https://okta.example.com/.well-known/openid-configuration
        usernameMapping: "{{ email }}"
        jitProvisioning: {enabled: false}
`)
	got := serversFor(t, "FireboltInstance").claim.admit(in, nil)
	if diff := cmp.Diff(Result{Object: want}, got); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}
