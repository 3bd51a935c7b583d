package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// The command is compiled once per test binary, into buildDir.
var (
	buildDir  string
	buildOnce sync.Once
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "function-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildFunction returns the compiled command.
func buildFunction(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(buildDir, "function")
	buildOnce.Do(func() {
		if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("cannot build: %v", buildErr)
	}
	return bin
}

type pki struct {
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	serial int64
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	return &pki{ca: ca, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), serial: 1}
}

// issue returns a PEM certificate and key signed by the CA.
func (p *pki) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) ([]byte, []byte) {
	t.Helper()
	p.serial++
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", addr); err == nil {
			_ = c.Close()
			return
		}
	}
	t.Fatalf("function did not listen on %s", addr)
}

// TestServesMTLS runs the binary the way Crossplane's package runtime does:
// certificates from TLS_SERVER_CERTS_DIR, client certificates required.
func TestServesMTLS(t *testing.T) {
	bin := buildFunction(t)
	p := newPKI(t)
	dir := t.TempDir()
	crt, key := p.issue(t, "function-firebolt", x509.ExtKeyUsageServerAuth)
	for name, b := range map[string][]byte{"tls.crt": crt, "tls.key": key, "ca.crt": p.caPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	cmd := exec.CommandContext(t.Context(), bin, "--address="+addr, "--metrics-address=")
	cmd.Env = append(os.Environ(), "TLS_SERVER_CERTS_DIR="+dir, "KUBECONFIG=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitListening(t, addr)

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.caPEM)
	call := func(clientCert *tls.Certificate) (*fnv1.RunFunctionResponse, error) {
		cfg := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		if clientCert != nil {
			cfg.Certificates = []tls.Certificate{*clientCert}
		}
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return fnv1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx, &fnv1.RunFunctionRequest{
			Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
				`{"apiVersion":"example.org/v1","kind":"XOther","metadata":{"name":"x"}}`)}},
		})
	}

	ccrt, ckey := p.issue(t, "crossplane", x509.ExtKeyUsageClientAuth)
	pair, err := tls.X509KeyPair(ccrt, ckey)
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := call(&pair)
	if err != nil {
		t.Fatalf("RunFunction with a client certificate: %v", err)
	}
	if len(rsp.GetResults()) != 1 || !strings.Contains(rsp.GetResults()[0].GetMessage(), `cannot compose XOther "x"`) {
		t.Errorf("want a fatal result naming the unknown kind, got %v", rsp.GetResults())
	}

	if _, err := call(nil); err == nil {
		t.Error("RunFunction without a client certificate succeeded; mTLS must require one")
	}
}

func TestRefusesToServeWithoutCredentials(t *testing.T) {
	bin := buildFunction(t)
	cmd := exec.CommandContext(t.Context(), bin, "--address="+freeAddr(t), "--metrics-address=")
	cmd.Env = append(os.Environ(), "TLS_SERVER_CERTS_DIR=", "KUBECONFIG=")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("function started without TLS or --insecure:\n%s", out)
	}
	if !strings.Contains(string(out), "--tls-certs-dir (or TLS_SERVER_CERTS_DIR) is required unless --insecure is set") {
		t.Errorf("unclear error:\n%s", out)
	}
}

func TestRejectsBadKubeconfig(t *testing.T) {
	bin := buildFunction(t)
	cmd := exec.CommandContext(t.Context(), bin, "--insecure", "--address="+freeAddr(t), "--metrics-address=")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "missing"))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cannot load kubeconfig") {
		t.Errorf("want a clear kubeconfig error, got err=%v:\n%s", err, out)
	}
}
