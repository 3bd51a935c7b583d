package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Crossplane package kinds.
var (
	ConfigurationGVK    = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Configuration"}
	FunctionGVK         = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"}
	FunctionRevisionGVK = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "FunctionRevision"}
	XRDGVK              = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositeResourceDefinition"}
)

// ConfigurationName is the name the Configuration is installed under.
const ConfigurationName = "configuration-firebolt"

// References of both packages in the loopback registry.
var (
	FunctionRef      = Registry + "/function-firebolt:" + PackageVersion
	ConfigurationRef = Registry + "/configuration-firebolt:" + PackageVersion
)

// installPackages serves an OCI registry on loopback, pushes both packages
// with `crossplane xpkg push` and mirrors provider-kubernetes there
// (mirrorProvider), installs the Configuration with `crossplane xpkg
// install` (Crossplane resolves and installs the Function and the Provider
// it depends on), plays the package runtime for that Function and that
// Provider, and waits until the Configuration and the Function are healthy
// and the claim kinds are served. startProviderKubernetes then runs the
// provider.
func (c *Cluster) installPackages(ctx context.Context) error {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", RegistryAddr)
	if err != nil {
		return errors.Wrap(err, "cannot listen for the registry")
	}
	rlog, err := os.Create(c.path("logs", "registry.log"))
	if err != nil {
		return errors.Wrap(err, "cannot create the registry log")
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(rlog, "", log.LstdFlags))), ReadHeaderTimeout: 10 * time.Second}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		_ = srv.Serve(l)
	}()
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		<-c.bgCtx.Done()
		_ = srv.Close()
		_ = rlog.Close()
	}()

	env := []string{"KUBECONFIG=" + c.Kubeconfig}
	for file, ref := range map[string]string{c.Tools.FunctionPackage: FunctionRef, c.Tools.ConfigurationPackage: ConfigurationRef} {
		if _, err := runOnce(ctx, c.Dir, env, c.Tools.Crossplane, "xpkg", "push", "-f", file, ref); err != nil {
			return errors.Wrapf(err, "cannot push %s", ref)
		}
	}

	if err := c.mirrorProvider(ctx, env); err != nil {
		return err
	}

	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		c.playRuntime(c.bgCtx)
	}()

	if _, err := runOnce(ctx, c.Dir, env, c.Tools.Crossplane, "xpkg", "install", "configuration", ConfigurationRef, ConfigurationName); err != nil {
		return errors.Wrap(err, "cannot install the Configuration")
	}
	if err := c.waitPackageHealthy(ctx, ConfigurationGVK, ConfigurationName); err != nil {
		return err
	}
	err = Wait(ctx, 2*time.Minute, "the Function the Configuration depends on", func(context.Context) (bool, string, error) {
		name := c.FunctionName()
		return name != "", "no FunctionRevision of " + FunctionRef + " yet", nil
	})
	if err != nil {
		return err
	}
	if err := c.waitPackageHealthy(ctx, FunctionGVK, c.FunctionName()); err != nil {
		return err
	}
	return c.waitXRDsOffered(ctx)
}

// waitPackageHealthy waits for a package's Installed and Healthy conditions.
func (c *Cluster) waitPackageHealthy(ctx context.Context, gvk schema.GroupVersionKind, name string) error {
	ri, err := c.Resource(gvk, "")
	if err != nil {
		return err
	}
	return Wait(ctx, 3*time.Minute, gvk.Kind+" "+name+" Installed and Healthy", func(ctx context.Context) (bool, string, error) {
		if err := c.procs.exitedEarly(); err != nil {
			return false, "", err
		}
		u, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, SeenErr(err), nil
		}
		installed, healthy := Condition(u, "Installed"), Condition(u, "Healthy")
		return installed.Status == "True" && healthy.Status == "True", fmt.Sprintf("Installed=%s, Healthy=%s", installed, healthy), nil
	})
}

// waitXRDsOffered waits until every XRD is established and offers its claim.
func (c *Cluster) waitXRDsOffered(ctx context.Context) error {
	ri, err := c.Resource(XRDGVK, "")
	if err != nil {
		return err
	}
	return Wait(ctx, 2*time.Minute, "every XRD Established and Offered", func(ctx context.Context) (bool, string, error) {
		l, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, SeenErr(err), nil
		}
		var pending []string
		for i := range l.Items {
			u := &l.Items[i]
			e, o := Condition(u, "Established"), Condition(u, "Offered")
			if e.Status != "True" || o.Status != "True" {
				pending = append(pending, fmt.Sprintf("%s Established=%s Offered=%s", u.GetName(), e, o))
			}
		}
		if len(l.Items) < len(v1alpha1.Composites) {
			return false, fmt.Sprintf("%d of %d XRDs", len(l.Items), len(v1alpha1.Composites)), nil
		}
		return len(pending) == 0, strings.Join(pending, "; "), nil
	})
}

// FunctionName is the name Crossplane gave the Function it installed as the
// Configuration's dependency; empty until it made a revision of it.
func (c *Cluster) FunctionName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fnName
}

// playRuntime is the package runtime controller Crossplane's External
// runtime expects someone else to be, for our Function's revisions and
// provider-kubernetes's (playProviderRevisions), every second.
func (c *Cluster) playRuntime(ctx context.Context) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		c.playFunctionRevisions(ctx)
		c.playProviderRevisions(ctx)
	}, time.Second)
}

// playFunctionRevisions publishes, for every active revision of our
// Function, the TLS server Secret and the endpoint the function listens on,
// and reports RuntimeHealthy from a real mTLS handshake with the function
// process, as a Deployment's availability would.
func (c *Cluster) playFunctionRevisions(ctx context.Context) {
	ri, err := c.Resource(FunctionRevisionGVK, "")
	if err != nil {
		return
	}
	l, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range l.Items {
		rev := &l.Items[i]
		image, _, _ := unstructured.NestedString(rev.Object, "spec", "image")
		if !strings.HasPrefix(image, Registry+"/function-firebolt") {
			continue
		}
		name := rev.GetLabels()["pkg.crossplane.io/package"]
		c.mu.Lock()
		c.fnName = name
		c.mu.Unlock()
		if state, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState"); state != "Active" {
			continue
		}
		if err := c.reconcileRevision(ctx, ri, rev, name); err != nil && !kerrors.IsConflict(err) {
			c.logf("runtime: revision %s: %v", rev.GetName(), err)
		}
	}
}

func (c *Cluster) reconcileRevision(ctx context.Context, ri dynamic.ResourceInterface, rev *unstructured.Unstructured, fn string) error {
	secret := fn + "-tls-server"
	if _, err := c.Kube.CoreV1().Secrets(CrossplaneNamespace).Get(ctx, secret, metav1.GetOptions{}); kerrors.IsNotFound(err) {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: CrossplaneNamespace},
			Data:       tlsData(c.xp.fnServer, c.xp.ca.Cert),
		}
		if _, err := c.Kube.CoreV1().Secrets(CrossplaneNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
			return err
		}
	}
	want := rev.DeepCopy()
	_ = unstructured.SetNestedField(want.Object, FunctionAddress, "status", "endpoint")
	_ = unstructured.SetNestedField(want.Object, secret, "status", "tlsServerSecretName")
	health := metav1.Condition{Type: "RuntimeHealthy", Status: metav1.ConditionTrue, Reason: "HealthyPackageRevision"}
	if err := c.handshake(ctx); err != nil {
		health = metav1.Condition{Type: "RuntimeHealthy", Status: metav1.ConditionFalse, Reason: "UnhealthyPackageRevision",
			Message: "function process is not serving: " + err.Error()}
	}
	setCondition(want, health)
	if equalStatus(rev, want) {
		return nil
	}
	_, err := ri.UpdateStatus(ctx, want, metav1.UpdateOptions{})
	return err
}

// handshake completes an mTLS handshake with the function as Crossplane
// would, with Crossplane's client certificate.
func (c *Cluster) handshake(ctx context.Context) error {
	cert, err := tls.LoadX509KeyPair(c.xp.clientDir+"/tls.crt", c.xp.clientDir+"/tls.key")
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.xp.ca.Cert)
	return tlsHandshake(ctx, FunctionAddress, &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12,
	})
}

// Condition returns an object's status condition of type t; a missing one
// has status Unknown.
func Condition(u *unstructured.Unstructured, t string) Cond {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok || m["type"] != t {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		return Cond{Type: t, Status: s("status"), Reason: s("reason"), Message: s("message")}
	}
	return Cond{Type: t, Status: "Unknown", Reason: "(absent)"}
}

// Cond is a status condition as the tests compare it.
type Cond struct {
	Type    string
	Status  string
	Reason  string
	Message string
}

func (c Cond) String() string {
	if c.Message == "" {
		return fmt.Sprintf("%s/%s", c.Status, c.Reason)
	}
	return fmt.Sprintf("%s/%s (%s)", c.Status, c.Reason, c.Message)
}

func setCondition(u *unstructured.Unstructured, cond metav1.Condition) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	now := time.Now().UTC().Format(time.RFC3339)
	entry := map[string]any{"type": cond.Type, "status": string(cond.Status), "reason": cond.Reason, "lastTransitionTime": now}
	if cond.Message != "" {
		entry["message"] = cond.Message
	}
	for i, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok || m["type"] != cond.Type {
			continue
		}
		if m["status"] == entry["status"] {
			entry["lastTransitionTime"] = m["lastTransitionTime"]
		}
		conds[i] = entry
		_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
		return
	}
	_ = unstructured.SetNestedSlice(u.Object, append(conds, entry), "status", "conditions")
}

func equalStatus(a, b *unstructured.Unstructured) bool {
	as, _, _ := unstructured.NestedFieldCopy(a.Object, "status")
	bs, _, _ := unstructured.NestedFieldCopy(b.Object, "status")
	return reflect.DeepEqual(as, bs)
}
