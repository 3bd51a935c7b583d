package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/crossplane/function-sdk-go/errors"
)

// cert-manager is a prerequisite of the cluster, as PostgreSQL's storage
// class is: the instance composes cert-manager Certificates for its signing
// keys and TLS, and its pods mount the Secrets cert-manager writes. The
// harness installs it as an administrator would before the Configuration:
// its CRDs (the pinned module's deploy/crds, the schemas its Helm chart
// ships), its controllers as a process (hack/tools/cert-manager-kwok: the
// Certificate, Issuer, ClusterIssuer and SelfSigned and CA
// CertificateRequest controllers of cert-manager's own packages; no webhook,
// no cainjector), and the issuer chain the original operator's end-to-end
// tests use: a SelfSigned ClusterIssuer, a CA Certificate it issues in
// CertManagerNamespace, and the ClusterIssuer CAIssuer backed by that
// Certificate's Secret, so every Certificate CAIssuer issues carries ca.crt.
//
// The controllers bind only loopback ports no other process of the stack
// holds (metrics 9402, health 9403), so they share the stack's network
// namespace. They run as admin: cert-manager's Helm chart grants its
// controller a role of its own that reads and writes Secrets and events in
// every namespace, which admin stands in for, as for the RBAC manager.
const (
	// CertManagerVersion is the cert-manager hack/tools.sh builds.
	CertManagerVersion = "v1.21.1"
	// CertManagerProcess is the controllers' process name.
	CertManagerProcess = "cert-manager"
	// CertManagerNamespace holds the CA's Secret: the controllers'
	// --cluster-resource-namespace, where a ClusterIssuer's Secrets live.
	CertManagerNamespace = "cert-manager"
	// CAIssuer is the CA ClusterIssuer Certificates of the stack name:
	// the name the original operator's auth-and-TLS example refers to, so
	// that example applies on the stack unchanged.
	CAIssuer = "internal-ca"
	// selfSignedIssuer issues the CA's own certificate.
	selfSignedIssuer = "internal-ca-root"
	// caCertificate is the CA's Certificate, and its Secret, in
	// CertManagerNamespace.
	caCertificate = "internal-ca"

	certManagerMetricsAddr = "127.0.0.1:9402"
	certManagerHealthAddr  = "127.0.0.1:9403"
	// certManagerReadyTimeout bounds each wait of the CA chain once the
	// controllers serve: the CA's issuance, then the CA issuer's check.
	certManagerReadyTimeout = 2 * time.Minute
)

// cert-manager's kinds.
var (
	CertificateGVK        = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}
	CertificateRequestGVK = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "CertificateRequest"}
	ClusterIssuerGVK      = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "ClusterIssuer"}
)

// startCertManager installs cert-manager's CRDs, runs its controllers, sets
// up the CA chain, and waits until CAIssuer is Ready.
func (c *Cluster) startCertManager(ctx context.Context) error {
	start := time.Now()
	if err := c.installCertManagerCRDs(ctx); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CertManagerNamespace}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrapf(err, "cannot create namespace %s", CertManagerNamespace)
	}
	c.logf("cert-manager: CRDs established in %s", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	if err := c.procs.start(CertManagerProcess, c.Tools.CertManager, []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--cluster-resource-namespace=" + CertManagerNamespace,
		"--metrics-listen-address=" + certManagerMetricsAddr,
		"--health-listen-address=" + certManagerHealthAddr,
		// A Certificate owns its Secret, so a Certificate the function
		// leaves out (a retired signing key) takes its Secret along.
		"--enable-certificate-owner-ref",
		// cert-manager's Helm chart default: what each controller does,
		// not every event it handles.
		"--v=2",
	}); err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, "cert-manager /readyz (informer caches synced)", "http://"+certManagerHealthAddr+"/readyz", nil, nil); err != nil {
		return err
	}
	c.logf("cert-manager: controllers serving %s after the process started", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	selfSigned, ca, caIssuer := caChain()
	for _, o := range []*unstructured.Unstructured{selfSigned, ca} {
		if _, err := c.Apply(ctx, o); err != nil {
			return err
		}
	}
	if err := c.waitCACertificate(ctx); err != nil {
		return err
	}
	// Applied once its Secret exists, so the issuer's first check passes
	// and its log holds no "secret not found" on the way.
	if _, err := c.Apply(ctx, caIssuer); err != nil {
		return err
	}
	if err := c.waitCAIssuer(ctx); err != nil {
		return err
	}
	c.logf("cert-manager: ClusterIssuer %s Ready %s after the chain was applied", CAIssuer, time.Since(start).Round(time.Millisecond))
	return nil
}

// installCertManagerCRDs server-side applies every CRD of the module's
// deploy/crds (the Certificate CRD is too large for a client-side apply's
// last-applied annotation) and waits until each is established.
func (c *Cluster) installCertManagerCRDs(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join(c.Tools.CertManagerCRDs, "*.yaml"))
	if err != nil || len(files) == 0 {
		return errors.Errorf("no CRDs in %s (hack/tools.sh cert-manager-crds): %v", c.Tools.CertManagerCRDs, err)
	}
	var names []string
	for _, f := range files {
		objs, err := ReadObjects(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.GroupVersionKind() != crdGVK {
				return errors.Errorf("%s holds a %s, not a CRD", f, o.GroupVersionKind())
			}
			if _, err := c.Apply(ctx, o); err != nil {
				return err
			}
			names = append(names, o.GetName())
		}
	}
	for _, n := range names {
		if err := c.waitCRDEstablished(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// caChain is the SelfSigned ClusterIssuer, the CA Certificate it issues and
// the CA ClusterIssuer backed by the CA's Secret.
func caChain() (selfSigned, ca, caIssuer *unstructured.Unstructured) {
	selfSigned = certManagerObject(ClusterIssuerGVK, "", selfSignedIssuer, map[string]any{"selfSigned": map[string]any{}})
	ca = certManagerObject(CertificateGVK, CertManagerNamespace, caCertificate, map[string]any{
		"isCA":       true,
		"commonName": "firebolt-e2e-ca",
		"secretName": caCertificate,
		// Ten years: no renewal of the CA during any run.
		"duration":   "87600h",
		"privateKey": map[string]any{"algorithm": "ECDSA", "size": int64(256)},
		"issuerRef":  map[string]any{"name": selfSignedIssuer, "kind": ClusterIssuerGVK.Kind, "group": ClusterIssuerGVK.Group},
	})
	caIssuer = certManagerObject(ClusterIssuerGVK, "", CAIssuer, map[string]any{"ca": map[string]any{"secretName": caCertificate}})
	return selfSigned, ca, caIssuer
}

// certManagerObject is a cert-manager object of kind gvk with spec.
func certManagerObject(gvk schema.GroupVersionKind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// waitCACertificate waits until the CA Certificate is Ready, saying on the
// way what holds it up: its own conditions or the SelfSigned issuer's.
func (c *Cluster) waitCACertificate(ctx context.Context) error {
	issuers, err := c.Resource(ClusterIssuerGVK, "")
	if err != nil {
		return err
	}
	certs, err := c.Resource(CertificateGVK, CertManagerNamespace)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("CA Certificate %s/%s Ready", CertManagerNamespace, caCertificate)
	return Wait(ctx, certManagerReadyTimeout, what, func(ctx context.Context) (bool, string, error) {
		if err := c.procs.exitedEarly(); err != nil {
			return false, "", err
		}
		crt, err := certs.Get(ctx, caCertificate, metav1.GetOptions{})
		if err != nil {
			return false, "CA Certificate: " + SeenErr(err), nil
		}
		ready := Condition(crt, "Ready")
		if ready.Status == string(metav1.ConditionTrue) {
			return true, "", nil
		}
		seen := fmt.Sprintf("CA Certificate Ready=%s Issuing=%s", ready, Condition(crt, "Issuing"))
		if ss, err := issuers.Get(ctx, selfSignedIssuer, metav1.GetOptions{}); err != nil {
			seen += "; ClusterIssuer " + selfSignedIssuer + ": " + SeenErr(err)
		} else {
			seen += fmt.Sprintf("; ClusterIssuer %s Ready=%s", selfSignedIssuer, Condition(ss, "Ready"))
		}
		return false, seen, nil
	})
}

// waitCAIssuer waits until CAIssuer is Ready.
func (c *Cluster) waitCAIssuer(ctx context.Context) error {
	issuers, err := c.Resource(ClusterIssuerGVK, "")
	if err != nil {
		return err
	}
	return Wait(ctx, certManagerReadyTimeout, "ClusterIssuer "+CAIssuer+" Ready", func(ctx context.Context) (bool, string, error) {
		if err := c.procs.exitedEarly(); err != nil {
			return false, "", err
		}
		ci, err := issuers.Get(ctx, CAIssuer, metav1.GetOptions{})
		if err != nil {
			return false, "ClusterIssuer " + CAIssuer + ": " + SeenErr(err), nil
		}
		ready := Condition(ci, "Ready")
		return ready.Status == string(metav1.ConditionTrue), "Ready=" + ready.String(), nil
	})
}
