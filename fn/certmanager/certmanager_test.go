package certmanager

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

func TestCertificate(t *testing.T) {
	issuer := v1alpha1.IssuerRef{Name: "internal-ca"}
	base := func(cm v1alpha1.CertManagerSpec) Spec {
		return Spec{
			Name: "demo-g3-engine-tls", Namespace: "analytics",
			Labels: map[string]string{"firebolt.io/engine": "demo"},
			Issuer: cm, Duration: 90 * 24 * time.Hour, RenewBefore: 30 * 24 * time.Hour,
			Extra: map[string]any{"usages": []any{"server auth"}},
		}
	}
	want := func(duration, renew string, kind string) map[string]any {
		spec := map[string]any{
			"secretName":     "demo-g3-engine-tls",
			"duration":       duration,
			"usages":         []any{"server auth"},
			"issuerRef":      map[string]any{"name": "internal-ca", "kind": kind, "group": "cert-manager.io"},
			"secretTemplate": map[string]any{"labels": map[string]any{"firebolt.io/engine": "demo"}},
		}
		if renew != "" {
			spec["renewBefore"] = renew
		}
		return map[string]any{
			"apiVersion": "cert-manager.io/v1",
			"kind":       "Certificate",
			"metadata": map[string]any{"name": "demo-g3-engine-tls", "namespace": "analytics",
				"labels": map[string]any{"firebolt.io/engine": "demo"}},
			"spec": spec,
		}
	}
	for name, tc := range map[string]struct {
		cm   v1alpha1.CertManagerSpec
		want map[string]any
	}{
		"Defaults": {
			cm:   v1alpha1.CertManagerSpec{IssuerRef: issuer},
			want: want("2160h0m0s", "720h0m0s", "ClusterIssuer"),
		},
		"OwnDurations": {
			cm: v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca", Kind: "Issuer"},
				Duration: &metav1.Duration{Duration: 48 * time.Hour}, RenewBefore: &metav1.Duration{Duration: 12 * time.Hour}},
			want: want("48h0m0s", "12h0m0s", "Issuer"),
		},
		"NonPositiveDurationsAreDefaults": {
			cm: v1alpha1.CertManagerSpec{IssuerRef: issuer,
				Duration: &metav1.Duration{Duration: -time.Hour}, RenewBefore: &metav1.Duration{}},
			want: want("2160h0m0s", "720h0m0s", "ClusterIssuer"),
		},
		"RenewBeforeNotShorterIsLeftToCertManager": {
			cm: v1alpha1.CertManagerSpec{IssuerRef: issuer,
				Duration: &metav1.Duration{Duration: 24 * time.Hour}, RenewBefore: &metav1.Duration{Duration: 24 * time.Hour}},
			want: want("24h0m0s", "", "ClusterIssuer"),
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := base(tc.cm)
			got := Certificate(s).Object
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Certificate() (-want +got):\n%s", d)
			}
			// The caller's maps are not shared with the object.
			got["metadata"].(map[string]any)["labels"].(map[string]any)["x"] = "y"
			got["spec"].(map[string]any)["extra"] = true
			if _, ok := s.Labels["x"]; ok {
				t.Error("the Certificate shares its labels with the caller's Spec")
			}
			if _, ok := s.Extra["extra"]; ok {
				t.Error("the Certificate shares its spec with the caller's Extra")
			}
		})
	}
}

func TestReady(t *testing.T) {
	crt := func(gen int64, conds ...any) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"generation": gen},
			"status":   map[string]any{"conditions": conds},
		}
	}
	ready := func(status string, observed int64) map[string]any {
		return map[string]any{"type": "Ready", "status": status, "observedGeneration": observed}
	}
	for name, tc := range map[string]struct {
		crt  map[string]any
		want bool
	}{
		"Nil":                   {nil, false},
		"NoConditions":          {crt(2), false},
		"ReadyForGeneration":    {crt(2, map[string]any{"type": "Issuing", "status": "True"}, ready("True", 2)), true},
		"ReadyForOlderSpec":     {crt(3, ready("True", 2)), false},
		"NotReady":              {crt(2, ready("False", 2)), false},
		"MalformedCondition":    {crt(2, "Ready"), false},
		"ObservedGenerationBad": {crt(2, map[string]any{"type": "Ready", "status": "True", "observedGeneration": "2"}), false},
		"NoGenerations":         {map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}}, false},
		// Crossplane hands a function observed objects through a protobuf
		// Struct, whose numbers are float64.
		"FloatsForGeneration": {floats(crt(2, ready("True", 2))), true},
		"FloatsForOlderSpec":  {floats(crt(3, ready("True", 2))), false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Ready(tc.crt); got != tc.want {
				t.Errorf("Ready() = %v, want %v", got, tc.want)
			}
		})
	}
}

// floats is obj with every int64 made a float64, as a protobuf Struct
// carries numbers.
func floats(obj map[string]any) map[string]any {
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case int64:
			return float64(x)
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	return walk(obj).(map[string]any)
}

func TestRequestName(t *testing.T) {
	crt := func(name string, rev any) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "status": map[string]any{"revision": rev}}
	}
	for name, tc := range map[string]struct {
		crt  map[string]any
		want string
	}{
		"Nil":            {nil, ""},
		"NotIssuedYet":   {map[string]any{"metadata": map[string]any{"name": "c"}}, ""},
		"Revision":       {crt("demo-g3-engine-tls", int64(2)), "demo-g3-engine-tls-2"},
		"RevisionZero":   {crt("c", int64(0)), ""},
		"RevisionString": {crt("c", "2"), ""},
		"NoName":         {crt("", int64(1)), ""},
		"FloatRevision":  {crt("c", float64(3)), "c-3"},
		"FractionalRev":  {crt("c", 2.5), ""},
	} {
		t.Run(name, func(t *testing.T) {
			if got := RequestName(tc.crt); got != tc.want {
				t.Errorf("RequestName() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCA(t *testing.T) {
	caPEM, leafPEM := newChain(t)
	request := func(field string) map[string]any {
		return map[string]any{"status": map[string]any{"ca": field}}
	}
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	sum := sha256.Sum256([]byte(strings.TrimSpace(string(caPEM))))
	wantFP := hex.EncodeToString(sum[:])

	for name, tc := range map[string]struct {
		cr     map[string]any
		wantOK bool
	}{
		"CA":                   {request(b64(caPEM)), true},
		"CAWithBlankLines":     {request(b64(append(append([]byte("\n\n"), caPEM...), '\n', '\n'))), true},
		"Absent":               {map[string]any{}, false},
		"NotBase64":            {request("%%%"), false},
		"NotPEM":               {request(b64([]byte("hello"))), false},
		"LeafIsNoCA":           {request(b64(leafPEM)), false},
		"NotACertificate":      {request(b64(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}))), false},
		"OtherBlockType":       {request(b64(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("k")}))), false},
		"OverTheBound":         {request(strings.Repeat("A", maxPEMField+4)), false},
		"NotAStringInStatus":   {map[string]any{"status": map[string]any{"ca": 7}}, false},
		"StatusNotAnObject":    {map[string]any{"status": "ca"}, false},
		"RequestWithoutStatus": {map[string]any{"spec": map[string]any{}}, false},
	} {
		t.Run(name, func(t *testing.T) {
			pemBytes, fp, ok := CA(tc.cr)
			if ok != tc.wantOK {
				t.Fatalf("CA() ok = %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				if pemBytes != nil || fp != "" {
					t.Errorf("CA() = %q, %q with ok false", pemBytes, fp)
				}
				return
			}
			if fp != wantFP {
				t.Errorf("fingerprint %s, want %s (the trimmed PEM's)", fp, wantFP)
			}
			if string(pemBytes) != strings.TrimSpace(string(caPEM)) {
				t.Errorf("PEM %q is not the trimmed CA", pemBytes)
			}
		})
	}
}

// newChain makes a CA and a leaf it signed, as PEM.
func newChain(t *testing.T) (caPEM, leafPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		DNSNames: []string{"localhost"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
}
