package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protojson"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// gatewayView is what the test reads of an instance's gateway.
type gatewayView struct {
	cond     harness.Cond
	status   map[string]any
	files    map[string]string
	dep      *appsv1.Deployment
	volumes  map[string]corev1.Volume
	strategy string
}

func (v gatewayView) String() string {
	return fmt.Sprintf("GatewayTLSReady=%s gatewayTLS=%v strategy=%s files=%v", v.cond, v.status, v.strategy, slices.Sorted(maps.Keys(v.files)))
}

// clientListener: envoy.yaml serves a client listener on 8080.
func (v gatewayView) clientListener() bool {
	return strings.Contains(v.files["envoy.yaml"], "port_value: 8080")
}

func (s *scenario) gatewayView(ctx context.Context, inst *unstructured.Unstructured) (gatewayView, error) {
	v := gatewayView{volumes: map[string]corev1.Volume{}}
	u, err := s.get(inst)
	if err != nil || u == nil {
		return v, err
	}
	v.cond = harness.Condition(u, "GatewayTLSReady")
	v.status, _, _ = unstructured.NestedMap(u.Object, "status", "gatewayTLS")
	cm, err := cp.Kube.CoreV1().ConfigMaps(s.ns).Get(ctx, inst.GetName()+"-gateway-config", metav1.GetOptions{})
	if err != nil {
		return v, err
	}
	v.files = cm.Data
	if v.dep, err = cp.Kube.AppsV1().Deployments(s.ns).Get(ctx, inst.GetName()+"-gateway", metav1.GetOptions{}); err != nil {
		return v, err
	}
	for _, vol := range v.dep.Spec.Template.Spec.Volumes {
		v.volumes[vol.Name] = vol
	}
	if ru := v.dep.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		v.strategy = ru.MaxUnavailable.String()
	}
	return v, nil
}

// TestGatewayServesTLSAndTightensFailClosed: an instance asking for TLS
// from an issuer that does not exist yet renders its gateway closed (no
// client listener, every old pod stopped first, nothing recorded served);
// once the issuer exists cert-manager issues the certificate the claim
// asked for (the gateway Service's names and dnsNames, server auth,
// chained to the issuer's CA) and the gateway serves TLS from it. Asked
// for mutual TLS with a CRL, it stages fail-closed again (a closed
// revision between TLS and mutual TLS) and then serves a listener that
// requires client certificates of clientCASecretRef and checks the CRL
// of crlSecretRef, both mounted, neither read by the function.
func TestGatewayServesTLSAndTightensFailClosed(t *testing.T) {
	s := newScenario(t, "gateway-tls")
	ctx := s.ctx
	ca, err := harness.NewTestCA("gateway-ca")
	s.must(err)
	clients, err := harness.NewTestCA("clients-ca")
	s.must(err)
	crl, err := clients.CRL(big.NewInt(7))
	s.must(err)

	inst := s.instance("demo")
	set(t, inst, map[string]any{"gateway": map[string]any{
		"enabled":     true,
		"certManager": map[string]any{"issuerRef": map[string]any{"name": "gateway-ca", "kind": "Issuer"}},
		"dnsNames":    []any{"firebolt.example.com"},
	}}, "spec", "tls")
	s.apply(inst)

	var v gatewayView
	s.wait(instanceReadyTimeout, "the gateway closed until the certificate is issued", func(ctx context.Context) (bool, string, error) {
		var err error
		v, err = s.gatewayView(ctx, inst)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		return v.cond.Reason == "CertificatePending", v.String(), nil
	})
	_, tlsVolume := v.volumes["tls-gateway"]
	if v.clientListener() || tlsVolume || v.status != nil || v.strategy != "100%" {
		t.Fatalf("a gateway waiting for its certificate must serve no client listener, mount no certificate, record nothing and roll old pods out first: %s", v)
	}

	// The issuer: a CA of the test's own, so the chain can be checked.
	_, err = cp.Kube.CoreV1().Secrets(s.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "gateway-ca-keypair"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": ca.Cert, "tls.key": ca.Key},
	}, metav1.CreateOptions{})
	s.must(err)
	s.apply(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"name": "gateway-ca", "namespace": s.ns},
		"spec":     map[string]any{"ca": map[string]any{"secretName": "gateway-ca-keypair"}},
	}})
	s.waitGatewayTLS(inst, "TLS")
	s.waitInstanceReady(inst)
	v, err = s.gatewayView(ctx, inst)
	s.must(err)
	if !v.clientListener() || v.volumes["tls-gateway"].Secret == nil || v.volumes["tls-gateway"].Secret.SecretName != "demo-gateway-tls" {
		t.Fatalf("a TLS gateway serves its listener with Secret demo-gateway-tls mounted: %s", v)
	}

	// What cert-manager issued, read with crypto/x509.
	sec, err := cp.Kube.CoreV1().Secrets(s.ns).Get(ctx, "demo-gateway-tls", metav1.GetOptions{})
	s.must(err)
	block, _ := pem.Decode(sec.Data["tls.crt"])
	if block == nil {
		t.Fatal("Secret demo-gateway-tls has no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	s.must(err)
	wantNames := []string{"demo-gateway", "demo-gateway." + s.ns, "demo-gateway." + s.ns + ".svc", "demo-gateway." + s.ns + ".svc.cluster.local", "firebolt.example.com"}
	if !slices.Equal(slices.Sorted(slices.Values(cert.DNSNames)), slices.Sorted(slices.Values(wantNames))) {
		t.Errorf("the gateway certificate names %v, want %v", cert.DNSNames, wantNames)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Certificate())
	for _, name := range wantNames {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("the gateway certificate does not verify for %s against the issuer's CA: %v", name, err)
		}
	}
	if k, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P384() {
		t.Errorf("the gateway key is %T, want ECDSA P-384 (certManager's defaults)", cert.PublicKey)
	}
	tlsRevision := v.dep.Annotations["deployment.kubernetes.io/revision"]

	// Mutual TLS with a CRL: another tightening.
	for name, data := range map[string]map[string][]byte{
		"clients-ca": {"ca.crt": clients.Cert}, "clients-crl": {"crl.pem": crl},
	} {
		_, err := cp.Kube.CoreV1().Secrets(s.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
		s.must(err)
	}
	set(t, inst, map[string]any{"name": "clients-ca"}, "spec", "tls", "gateway", "clientCASecretRef")
	set(t, inst, map[string]any{"name": "clients-crl"}, "spec", "tls", "gateway", "crlSecretRef")
	s.apply(inst)
	s.waitGatewayTLS(inst, "MutualTLS")
	v, err = s.gatewayView(ctx, inst)
	s.must(err)
	if v.status["clientCASecretName"] != "clients-ca" || v.status["crlSecretName"] != "clients-crl" {
		t.Errorf("status.gatewayTLS = %v, want the client CA and CRL Secrets named", v.status)
	}
	src := v.volumes["client-ca"].Projected
	if src == nil || len(src.Sources) != 2 || src.Sources[0].Secret.Name != "clients-ca" || src.Sources[1].Secret.Name != "clients-crl" {
		t.Fatalf("the gateway mounts client-ca %+v, want Secrets clients-ca and clients-crl", v.volumes["client-ca"])
	}
	checkMutualTLSConfig(t, v.files)

	// Between the TLS and the mutual TLS revisions the Deployment ran a
	// closed one: no certificate mounted, rolled with maxUnavailable 100%.
	rss, err := cp.Kube.AppsV1().ReplicaSets(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "firebolt.io/instance=demo,firebolt.io/component=gateway"})
	s.must(err)
	byRevision := map[int]appsv1.ReplicaSet{}
	for _, rs := range rss.Items {
		n, _ := strconv.Atoi(rs.Annotations["deployment.kubernetes.io/revision"])
		byRevision[n] = rs
	}
	from, _ := strconv.Atoi(tlsRevision)
	var between []string
	for n := from + 1; n < from+10; n++ {
		rs, ok := byRevision[n]
		if !ok {
			break
		}
		kind := "closed"
		for _, vol := range rs.Spec.Template.Spec.Volumes {
			if vol.Name == "tls-gateway" {
				kind = "tls"
			}
			if vol.Name == "client-ca" {
				kind = "mutual"
			}
		}
		between = append(between, kind)
	}
	if !slices.Equal(between, []string{"closed", "mutual"}) {
		t.Errorf("revisions after the TLS one (%d): %v, want a closed one, then mutual TLS", from, between)
	}
}

// waitGatewayTLS waits for GatewayTLSReady True with mode in status.
func (s *scenario) waitGatewayTLS(inst *unstructured.Unstructured, mode string) {
	s.t.Helper()
	s.wait(rolloutTimeout, "GatewayTLSReady=True serving "+mode, func(ctx context.Context) (bool, string, error) {
		v, err := s.gatewayView(ctx, inst)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		return v.cond.Status == "True" && v.status["mode"] == mode, v.String(), nil
	})
}

// checkMutualTLSConfig reads the rendered SDS validation file as Envoy
// does and checks it trusts the mounted client CA and checks the CRL.
func checkMutualTLSConfig(t *testing.T, files map[string]string) {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(files["sds-validation.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	r := &discoveryv3.DiscoveryResponse{}
	if err := protojson.Unmarshal(j, r); err != nil {
		t.Fatalf("sds-validation.yaml: %v", err)
	}
	if len(r.GetResources()) != 1 {
		t.Fatalf("sds-validation.yaml holds %d resources", len(r.GetResources()))
	}
	sec := &tlsv3.Secret{}
	if err := r.GetResources()[0].UnmarshalTo(sec); err != nil {
		t.Fatal(err)
	}
	if err := sec.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	vc := sec.GetValidationContext()
	if vc.GetTrustedCa().GetFilename() != "/etc/envoy-tls/client/ca.crt" || vc.GetCrl().GetFilename() != "/etc/envoy-tls/client/crl.pem" {
		t.Errorf("the validation context trusts %q and checks %q, want the mounted ca.crt and crl.pem", vc.GetTrustedCa().GetFilename(), vc.GetCrl().GetFilename())
	}
	if !strings.Contains(files["envoy.yaml"], "require_client_certificate: true") {
		t.Error("envoy.yaml does not require client certificates")
	}
}
