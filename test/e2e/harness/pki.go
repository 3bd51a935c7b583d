package harness

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

// A keyPair is a certificate and its key, PEM encoded.
type keyPair struct {
	Cert []byte
	Key  []byte

	cert   *x509.Certificate
	signer crypto.Signer
}

// certSpec says what a certificate is for.
type certSpec struct {
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	Server       bool
	Client       bool
}

// newCA makes a self-signed certificate authority. ECDSA keys: RSA key
// generation is slow on a busy two-core machine.
func newCA(name string) (*keyPair, error) {
	return issue(nil, certSpec{CommonName: name})
}

// issue signs a certificate with ca, or self-signs a CA when ca is nil.
func issue(ca *keyPair, s certSpec) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.Wrap(err, "cannot generate a key")
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, errors.Wrap(err, "cannot generate a serial number")
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: s.CommonName, Organization: s.Organization},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		DNSNames:     s.DNSNames,
		IPAddresses:  s.IPs,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if s.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if s.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	parent, signer := tmpl, crypto.Signer(key)
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	} else {
		parent, signer = ca.cert, ca.signer
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot sign the certificate of %s", s.CommonName)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, errors.Wrap(err, "cannot parse a certificate just made")
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, errors.Wrap(err, "cannot encode a key")
	}
	return &keyPair{
		Cert:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:    pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
		cert:   cert,
		signer: key,
	}, nil
}

// parseKeyPair reads a PEM certificate and key, e.g. a CA Crossplane made.
func parseKeyPair(certPEM, keyPEM []byte) (*keyPair, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil {
		return nil, errors.New("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, errors.Wrap(err, "cannot parse the certificate")
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, errors.New("no PEM key")
	}
	var signer crypto.Signer
	switch kb.Type {
	case "RSA PRIVATE KEY":
		signer, err = x509.ParsePKCS1PrivateKey(kb.Bytes)
	case "EC PRIVATE KEY":
		signer, err = x509.ParseECPrivateKey(kb.Bytes)
	default:
		var k any
		k, err = x509.ParsePKCS8PrivateKey(kb.Bytes)
		if s, ok := k.(crypto.Signer); ok {
			signer = s
		}
	}
	if err != nil || signer == nil {
		return nil, errors.Errorf("cannot parse the %s key: %v", kb.Type, err)
	}
	return &keyPair{Cert: certPEM, Key: keyPEM, cert: cert, signer: signer}, nil
}

// pki is every certificate of the Kubernetes control plane.
type pki struct {
	CA         *keyPair
	APIServer  *keyPair
	Admin      *keyPair
	FrontProxy *keyPair
	// SAKey signs service account tokens.
	SAKey []byte
	SAPub []byte
}

func newPKI(dir string) (*pki, error) {
	ca, err := newCA("firebolt-e2e-ca")
	if err != nil {
		return nil, err
	}
	p := &pki{CA: ca}
	specs := []struct {
		into **keyPair
		spec certSpec
	}{
		{&p.APIServer, certSpec{
			CommonName: "kube-apiserver", Server: true,
			DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			IPs:      []net.IP{net.IPv4(127, 0, 0, 1), firstServiceIP()},
		}},
		{&p.Admin, certSpec{CommonName: "admin", Organization: []string{"system:masters"}, Client: true}},
		{&p.FrontProxy, certSpec{CommonName: "front-proxy-client", Client: true}},
	}
	for _, s := range specs {
		kp, err := issue(ca, s.spec)
		if err != nil {
			return nil, err
		}
		*s.into = kp
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.Wrap(err, "cannot generate the service account key")
	}
	kder, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		return nil, errors.Wrap(err, "cannot encode the service account key")
	}
	pder, err := x509.MarshalPKIXPublicKey(sa.Public())
	if err != nil {
		return nil, errors.Wrap(err, "cannot encode the service account public key")
	}
	p.SAKey = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	p.SAPub = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder})
	return p, p.write(dir)
}

func (p *pki) write(dir string) error {
	files := map[string][]byte{
		"ca.crt":        p.CA.Cert,
		"apiserver.crt": p.APIServer.Cert, "apiserver.key": p.APIServer.Key,
		"front-proxy-client.crt": p.FrontProxy.Cert, "front-proxy-client.key": p.FrontProxy.Key,
		"sa.key": p.SAKey, "sa.pub": p.SAPub,
	}
	return writeFiles(dir, files)
}

func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Wrapf(err, "cannot create %s", dir)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return errors.Wrapf(err, "cannot write %s", name)
		}
	}
	return nil
}

// firstServiceIP is the ClusterIP of the kubernetes Service.
func firstServiceIP() net.IP {
	ip, _, _ := net.ParseCIDR(ServiceCIDR)
	ip = ip.To4()
	return net.IPv4(ip[0], ip[1], ip[2], ip[3]+1)
}

// TestCA is a certificate authority a test makes for itself, to check what
// cert-manager issues from it or to stand for a client CA.
type TestCA struct{ *keyPair }

// NewTestCA makes a self-signed CA named name.
func NewTestCA(name string) (TestCA, error) {
	kp, err := newCA(name)
	return TestCA{kp}, err
}

// Certificate is the CA's parsed certificate.
func (c TestCA) Certificate() *x509.Certificate { return c.cert }

// CRL is a revocation list the CA signs, revoking serial, PEM encoded.
func (c TestCA) CRL(serial *big.Int) ([]byte, error) {
	now := time.Now()
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: big.NewInt(1), ThisUpdate: now, NextUpdate: now.Add(time.Hour),
		RevokedCertificateEntries: []x509.RevocationListEntry{{SerialNumber: serial, RevocationTime: now}},
	}, c.cert, c.signer)
	if err != nil {
		return nil, errors.Wrap(err, "cannot sign a revocation list")
	}
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}), nil
}
