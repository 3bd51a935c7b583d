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
)

// TestPublicKeyFingerprintHostile: a CertificateRequest's status and spec
// are written by others; garbage, a huge field, a PEM block that is not a
// certificate, or a certificate that does not parse names no key (the key
// stays pending), and a valid certificate wins over a bad request.
func TestPublicKeyFingerprintHostile(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	want := hex.EncodeToString(sum[:])
	b64pem := func(typ string, b []byte) string {
		return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}))
	}
	good := b64pem("CERTIFICATE", der)
	huge := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("A", 64<<10)))
	cases := map[string]struct {
		certificate, request string
		want                 string
	}{
		"Valid":               {certificate: good, want: want},
		"NotBase64":           {certificate: "%%%not base64%%%"},
		"NotPEM":              {certificate: base64.StdEncoding.EncodeToString([]byte("hello"))},
		"PEMNotACertificate":  {certificate: b64pem("CERTIFICATE", []byte("garbage"))},
		"Huge":                {certificate: huge},
		"BadCertGoodFallback": {certificate: b64pem("CERTIFICATE", []byte{0x30, 0x03, 0x02, 0x01, 0x01}), request: b64pem("CERTIFICATE REQUEST", []byte("x"))},
		"Empty":               {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := map[string]any{"spec": map[string]any{"request": tc.request}, "status": map[string]any{"certificate": tc.certificate}}
			if got := PublicKeyFingerprint(cr); got != tc.want {
				t.Errorf("PublicKeyFingerprint() = %q, want %q", got, tc.want)
			}
		})
	}
}
