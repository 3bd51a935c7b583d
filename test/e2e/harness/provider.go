package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
)

// provider-kubernetes is the Configuration's other dependency. The harness
// installs it as a user whose cluster reaches no public registry would: the
// package is published in the loopback registry, standing for the user's
// mirror, and an ImageConfig's rewriteImage sends Crossplane there; the
// generated crossplane.yaml keeps naming the upstream package. Crossplane
// runs with the External package runtime, so the harness plays the runtime
// for the provider's revision as it does for the function's, and runs the
// real provider binary as a process, in a network namespace of its own
// (bridge.go): it binds :8080 and :9443 on every interface, which the RBAC
// manager and the function hold in the stack's namespace.
const (
	// ProviderKubernetesPackage is the package the Configuration depends on.
	ProviderKubernetesPackage = "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes"
	// ProviderKubernetesVersion is the release hack/tools.sh builds, the
	// only one the mirror holds, so the one Crossplane resolves.
	ProviderKubernetesVersion = "v0.17.1"
	// ProviderConfigName is the ProviderConfig every composed Object names.
	ProviderConfigName = "default"
	// ProviderProcess is the provider's process (its bridge's) name.
	ProviderProcess = "provider-kubernetes"

	// The mirror: every crossplane-contrib package, in the loopback
	// registry.
	mirrorFrom = "xpkg.crossplane.io/crossplane-contrib/"
	mirrorTo   = RegistryAddr + "/crossplane-contrib/"

	// providerPoll is the provider's --poll, a harness choice: how often it
	// observes an Object again without a change to it (its default is 10m).
	// An Object whose apply failed is retried on the managed reconciler's
	// own backoff anyway; a short poll bounds how long drift on the target
	// (a StatefulSet edited by someone else) lasts within a test's waits.
	providerPoll = "10s"

	// Crossplane points the Object CRD's conversion webhook at a Service
	// named after the Provider, on port 9443. The API server dials that
	// Service's ClusterIP, a local address in the stack's namespace, where
	// the harness listens and forwards to the provider's webhook server.
	providerWebhookClusterIP = "10.96.0.11"
	providerWebhookPort      = 9443
	// Where the provider dials the API server, and serves its webhook,
	// inside its own namespace: the bridge listens on the first and
	// forwards to the second.
	providerAPIAddr     = "127.0.0.1:6443"
	providerWebhookAddr = "127.0.0.1:9443"

	labelParentPackage = "pkg.crossplane.io/package"
	packageRuntime     = "package-runtime"
	// What ProviderRevisionReady waits for at most.
	providerStartTimeout = 3 * time.Minute
)

// pkgGroup is the API group of Crossplane's package manager.
const pkgGroup = "pkg.crossplane.io"

// Kinds of the provider and of Crossplane's package runtime.
var (
	ProviderGVK                = schema.GroupVersionKind{Group: pkgGroup, Version: "v1", Kind: "Provider"}
	ProviderRevisionGVK        = schema.GroupVersionKind{Group: pkgGroup, Version: "v1", Kind: "ProviderRevision"}
	imageConfigGVK             = schema.GroupVersionKind{Group: pkgGroup, Version: "v1beta1", Kind: "ImageConfig"}
	deploymentRuntimeConfigGVK = schema.GroupVersionKind{Group: pkgGroup, Version: "v1beta1", Kind: "DeploymentRuntimeConfig"}
	lockGVK                    = schema.GroupVersionKind{Group: pkgGroup, Version: "v1beta1", Kind: "Lock"}
	crdGVK                     = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	ObjectGVK                  = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha2", Kind: "Object"}
	ProviderConfigGVK          = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha1", Kind: "ProviderConfig"}
)

// errNotResolved says Crossplane has yet to label the revision with its
// package and resolve its path: a step of every install, not a problem.
var errNotResolved = errors.New("Crossplane has not labelled the revision or resolved its package yet")

// providerRuntime is what the runtime the harness plays found for the
// provider's active revision, and runs it with.
type providerRuntime struct {
	Provider       string
	Revision       string
	ServiceAccount string
	// Args are the runtime config's package-runtime container arguments.
	Args []string
}

type providerState struct {
	runtime *providerRuntime
	// problem says why there is no runtime yet, for the startup wait.
	problem string
	// The webhook's server certificate (and the client certificate the
	// runtime also makes), issued once by Crossplane's root CA.
	server, client *keyPair
}

// ProviderName is the name Crossplane gave the Provider it installed as the
// Configuration's dependency; empty until the harness saw its revision.
func (c *Cluster) ProviderName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.prov.runtime == nil {
		return ""
	}
	return c.prov.runtime.Provider
}

func (c *Cluster) providerSnapshot() (*providerRuntime, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prov.runtime, c.prov.problem
}

// mirrorProvider publishes provider-kubernetes in the loopback registry and
// tells Crossplane so as a user with a mirror would, before the
// Configuration that depends on it is installed. Two ImageConfigs: the
// rewrite, matched against the package's upstream path, and the runtime
// config, which Crossplane matches against the path after the rewrite, so
// deploy/imageconfig.yaml's (upstream path) does not apply to a mirrored
// provider by itself: the user repeats its configRef for the mirror's path.
func (c *Cluster) mirrorProvider(ctx context.Context, env []string) error {
	if !strings.HasPrefix(ProviderKubernetesPackage, mirrorFrom) {
		return errors.Errorf("%s is not under the mirrored %s", ProviderKubernetesPackage, mirrorFrom)
	}
	mirrored := mirrorTo + strings.TrimPrefix(ProviderKubernetesPackage, mirrorFrom)
	if _, err := runOnce(ctx, c.Dir, env, c.Tools.Crossplane, "xpkg", "push", "-f", c.Tools.ProviderKubernetesPackage, mirrored+":"+ProviderKubernetesVersion); err != nil {
		return errors.Wrapf(err, "cannot push %s", mirrored)
	}
	rc, err := c.runtimeConfigFor(ctx, ProviderKubernetesPackage)
	if err != nil {
		return err
	}
	if rc == "" {
		return errors.Errorf("deploy/ has no ImageConfig that gives %s a runtime config", ProviderKubernetesPackage)
	}
	for _, ic := range []map[string]any{{
		"metadata": map[string]any{"name": "e2e-mirror-crossplane-contrib"},
		"spec": map[string]any{
			"matchImages":  []any{map[string]any{"type": "Prefix", "prefix": mirrorFrom}},
			"rewriteImage": map[string]any{"prefix": mirrorTo},
		},
	}, {
		"metadata": map[string]any{"name": "e2e-mirror-provider-kubernetes-runtime"},
		"spec": map[string]any{
			"matchImages": []any{map[string]any{"type": "Prefix", "prefix": mirrored}},
			"runtime":     map[string]any{"configRef": map[string]any{"name": rc}},
		},
	}} {
		u := &unstructured.Unstructured{Object: ic}
		u.SetGroupVersionKind(imageConfigGVK)
		if _, err := c.Apply(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

// runtimeConfigFor is the DeploymentRuntimeConfig Crossplane's runtime picks
// for a package path: that of the ImageConfig with a runtime config whose
// prefix matching the path is the longest. Empty when none matches.
func (c *Cluster) runtimeConfigFor(ctx context.Context, path string) (string, error) {
	ri, err := c.Resource(imageConfigGVK, "")
	if err != nil {
		return "", err
	}
	l, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", errors.Wrap(err, "cannot list ImageConfigs")
	}
	name, longest := "", 0
	for i := range l.Items {
		ref, _, _ := unstructured.NestedString(l.Items[i].Object, "spec", "runtime", "configRef", "name")
		if ref == "" {
			continue
		}
		matches, _, _ := unstructured.NestedSlice(l.Items[i].Object, "spec", "matchImages")
		for _, m := range matches {
			mm, _ := m.(map[string]any)
			p, _ := mm["prefix"].(string)
			if strings.HasPrefix(path, p) && len(p) > longest {
				name, longest = ref, len(p)
			}
		}
	}
	return name, nil
}

// playProviderRevisions is the package runtime for provider-kubernetes's
// active revision (called from playRuntime, every second).
func (c *Cluster) playProviderRevisions(ctx context.Context) {
	ri, err := c.Resource(ProviderRevisionGVK, "")
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
		state, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState")
		if !strings.HasPrefix(image, ProviderKubernetesPackage+":") || state != "Active" {
			continue
		}
		err := c.reconcileProviderRevision(ctx, ri, rev)
		if kerrors.IsConflict(err) {
			continue
		}
		problem := ""
		if err != nil {
			problem = fmt.Sprintf("runtime of ProviderRevision %s: %v", rev.GetName(), err)
		}
		c.mu.Lock()
		changed := problem != c.prov.problem
		c.prov.problem = problem
		c.mu.Unlock()
		if changed && problem != "" && !errors.Is(err, errNotResolved) {
			c.logf("%s", problem)
		}
	}
}

// reconcileProviderRevision does what Crossplane's Deployment runtime does
// for a provider revision, but for a process the harness runs: the service
// account and the Deployment the revision's runtime config describes (the
// Deployment has no replicas: it records the runtime, and Crossplane's RBAC
// manager binds the revision's system role to the service account of every
// Deployment the revision controls), the webhook Service and TLS Secrets,
// the TLS Secret names in the revision's status (the revision waits for the
// server's, whose certificate it injects into the CRD's conversion webhook)
// and the runtime's health: the process running and its webhook answering a
// TLS handshake through the Service, as the API server would reach it.
func (c *Cluster) reconcileProviderRevision(ctx context.Context, ri dynamic.ResourceInterface, rev *unstructured.Unstructured) error {
	provider := rev.GetLabels()[labelParentPackage]
	resolved, _, _ := unstructured.NestedString(rev.Object, "status", "resolvedImage")
	if provider == "" || resolved == "" {
		return errNotResolved
	}
	server, client, err := c.providerCerts(provider, rev.GetName())
	if err != nil {
		return err
	}
	// The runtime's objects, once per revision.
	if rt, _ := c.providerSnapshot(); rt == nil || rt.Revision != rev.GetName() {
		rc, err := c.runtimeConfigFor(ctx, resolved)
		if err != nil {
			return err
		}
		if rc == "" {
			return errors.Errorf("no ImageConfig gives %s a runtime config; Crossplane's Deployment runtime would run the provider with "+
				"its defaults (service account %s, no --enable-server-side-apply), which deploy/ grants nothing", resolved, rev.GetName())
		}
		rt, err := c.readRuntimeConfig(ctx, rc, provider, rev.GetName())
		if err != nil {
			return err
		}
		owner := metav1.OwnerReference{
			APIVersion: ProviderRevisionGVK.GroupVersion().String(), Kind: ProviderRevisionGVK.Kind,
			Name: rev.GetName(), UID: rev.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}
		if err := c.ensureProviderObjects(ctx, owner, rt, resolved, server, client); err != nil {
			return err
		}
		c.mu.Lock()
		c.prov.runtime = rt
		c.mu.Unlock()
	}

	want := rev.DeepCopy()
	_ = unstructured.SetNestedField(want.Object, provider+"-tls-server", "status", "tlsServerSecretName")
	_ = unstructured.SetNestedField(want.Object, provider+"-tls-client", "status", "tlsClientSecretName")
	health := metav1.Condition{Type: "RuntimeHealthy", Status: metav1.ConditionTrue, Reason: "HealthyPackageRevision"}
	if err := c.providerServing(ctx, provider, server); err != nil {
		health = metav1.Condition{Type: "RuntimeHealthy", Status: metav1.ConditionFalse, Reason: "UnhealthyPackageRevision",
			Message: "provider process is not serving: " + err.Error()}
	}
	setCondition(want, health)
	setCondition(want, metav1.Condition{Type: "RuntimeActive", Status: metav1.ConditionTrue, Reason: "ActiveRuntime"})
	if equalStatus(rev, want) {
		return nil
	}
	_, err = ri.UpdateStatus(ctx, want, metav1.UpdateOptions{})
	return err
}

// readRuntimeConfig reads what the harness takes from a
// DeploymentRuntimeConfig: the service account's name (the revision's name
// by default, as Crossplane's) and the package-runtime container's
// arguments.
func (c *Cluster) readRuntimeConfig(ctx context.Context, name, provider, revision string) (*providerRuntime, error) {
	ri, err := c.Resource(deploymentRuntimeConfigGVK, "")
	if err != nil {
		return nil, err
	}
	drc, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read DeploymentRuntimeConfig %s", name)
	}
	rt := &providerRuntime{Provider: provider, Revision: revision, ServiceAccount: revision}
	if sa, _, _ := unstructured.NestedString(drc.Object, "spec", "serviceAccountTemplate", "metadata", "name"); sa != "" {
		rt.ServiceAccount = sa
	}
	containers, _, _ := unstructured.NestedSlice(drc.Object, "spec", "deploymentTemplate", "spec", "template", "spec", "containers")
	for _, raw := range containers {
		ct, _ := raw.(map[string]any)
		if ct["name"] != packageRuntime {
			continue
		}
		rt.Args, _, _ = unstructured.NestedStringSlice(ct, "args")
	}
	return rt, nil
}

// providerCerts issues the webhook's server certificate for the Service's
// names and the runtime's client certificate, once.
func (c *Cluster) providerCerts(provider, revision string) (server, client *keyPair, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.prov.server == nil {
		if c.prov.server, err = issue(c.xp.ca, certSpec{CommonName: provider, Server: true, DNSNames: serviceDNSNames(provider)}); err != nil {
			return nil, nil, err
		}
	}
	if c.prov.client == nil {
		if c.prov.client, err = issue(c.xp.ca, certSpec{CommonName: revision, Client: true}); err != nil {
			return nil, nil, err
		}
	}
	return c.prov.server, c.prov.client, nil
}

// tlsData is a TLS Secret's (or certificate directory's) content: the
// certificate, its key and the CA that signed it.
func tlsData(kp *keyPair, ca []byte) map[string][]byte {
	return map[string][]byte{"tls.crt": kp.Cert, "tls.key": kp.Key, "ca.crt": ca}
}

// serviceDNSNames are a Service's names, as Crossplane's certificate
// generator writes them into a package's server certificate.
func serviceDNSNames(service string) []string {
	return []string{service, service + "." + CrossplaneNamespace, service + "." + CrossplaneNamespace + ".svc"}
}

// ensureProviderObjects creates what Crossplane's runtime would, unless it
// exists. A revision's runtime config is read once: the harness's runtime
// does not follow later edits of it.
func (c *Cluster) ensureProviderObjects(ctx context.Context, owner metav1.OwnerReference, rt *providerRuntime, image string, server, client *keyPair) error {
	ns := CrossplaneNamespace
	om := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: []metav1.OwnerReference{owner}}
	}
	labels := map[string]string{"pkg.crossplane.io/revision": rt.Revision, "pkg.crossplane.io/provider": rt.Provider}
	dep := &appsv1.Deployment{
		ObjectMeta: om(rt.Revision),
		Spec: appsv1.DeploymentSpec{
			// The harness runs the provider as a process; this records it.
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pkg.crossplane.io/revision": rt.Revision}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: rt.ServiceAccount,
					Containers:         []corev1.Container{{Name: packageRuntime, Image: image, Args: rt.Args}},
				},
			},
		},
	}
	dep.Annotations = map[string]string{"firebolt.io/e2e-runtime": "the e2e harness runs this provider as a process outside the cluster"}
	svc := &corev1.Service{
		ObjectMeta: om(rt.Provider),
		Spec: corev1.ServiceSpec{
			ClusterIP: providerWebhookClusterIP,
			Ports: []corev1.ServicePort{{
				Name: "webhook", Protocol: corev1.ProtocolTCP, Port: providerWebhookPort, TargetPort: intstr.FromInt32(providerWebhookPort),
			}},
		},
	}
	secret := func(name string, kp *keyPair) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: om(name), Type: corev1.SecretTypeOpaque,
			Data: tlsData(kp, c.xp.ca.Cert)}
	}
	kube := c.Kube
	creates := []struct {
		what   string
		create func() error
	}{
		{"ServiceAccount " + rt.ServiceAccount, func() error {
			_, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: om(rt.ServiceAccount)}, metav1.CreateOptions{})
			return err
		}},
		{"Deployment " + dep.Name, func() error {
			_, err := kube.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{})
			return err
		}},
		{"Service " + svc.Name, func() error {
			_, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
			return err
		}},
		{"Secret " + rt.Provider + "-tls-server", func() error {
			_, err := kube.CoreV1().Secrets(ns).Create(ctx, secret(rt.Provider+"-tls-server", server), metav1.CreateOptions{})
			return err
		}},
		{"Secret " + rt.Provider + "-tls-client", func() error {
			_, err := kube.CoreV1().Secrets(ns).Create(ctx, secret(rt.Provider+"-tls-client", client), metav1.CreateOptions{})
			return err
		}},
	}
	for _, o := range creates {
		if err := o.create(); err != nil && !kerrors.IsAlreadyExists(err) {
			return errors.Wrapf(err, "cannot create %s", o.what)
		}
	}
	return nil
}

// providerServing checks the provider process runs and its webhook serves
// TLS through the Service's ClusterIP, verified as the API server verifies
// it: against the certificate Crossplane injected, for the Service's name.
func (c *Cluster) providerServing(ctx context.Context, provider string, server *keyPair) error {
	p := c.procs.get(ProviderProcess)
	if p == nil {
		return errors.New("not started yet")
	}
	if ok, err := p.Running(); !ok {
		return errors.Errorf("exited: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(server.Cert)
	return tlsHandshake(ctx, net.JoinHostPort(providerWebhookClusterIP, strconv.Itoa(providerWebhookPort)), &tls.Config{
		RootCAs: pool, ServerName: provider + "." + CrossplaneNamespace + ".svc", MinVersion: tls.VersionTLS12,
	})
}

// tlsHandshake completes one TLS handshake with addr, bounded.
func tlsHandshake(ctx context.Context, addr string, cfg *tls.Config) error {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second}, Config: cfg}
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := d.DialContext(hctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// startProviderKubernetes runs provider-kubernetes once Crossplane
// installed its revision, and waits until it serves: the Provider
// Installed and Healthy, its Object and ProviderConfig kinds established,
// and the ProviderConfig every Object names in place.
func (c *Cluster) startProviderKubernetes(ctx context.Context) error {
	start := time.Now()
	rt, err := c.waitProviderRevision(ctx)
	if err != nil {
		return err
	}
	c.logf("provider-kubernetes: revision %s healthy and its role bound (waited %s)", rt.Revision, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := c.startProviderProcess(ctx, rt); err != nil {
		return err
	}
	if err := c.waitPackageHealthy(ctx, ProviderGVK, rt.Provider); err != nil {
		return err
	}
	c.logf("provider-kubernetes: Provider %s Healthy %s after its process started", rt.Provider, time.Since(start).Round(time.Millisecond))
	for _, crd := range []string{"objects.kubernetes.crossplane.io", "providerconfigs.kubernetes.crossplane.io"} {
		if err := c.waitCRDEstablished(ctx, crd); err != nil {
			return err
		}
	}
	return c.providerConfig(ctx, rt)
}

// waitProviderRevision waits until the provider's revision is what
// Crossplane's runtime waits for before it starts the provider (its Post
// hook): healthy, so its CRDs are established (a provider started earlier
// cannot watch its kinds), with the runtime's objects in place and the RBAC
// manager's binding of the revision's system role to the provider's service
// account.
func (c *Cluster) waitProviderRevision(ctx context.Context) (*providerRuntime, error) {
	var rt *providerRuntime
	err := Wait(ctx, providerStartTimeout, "the ProviderRevision of "+ProviderKubernetesPackage+" healthy, its runtime prepared and its role bound",
		func(ctx context.Context) (bool, string, error) {
			if err := c.procs.exitedEarly(); err != nil {
				return false, "", err
			}
			var problem string
			rt, problem = c.providerSnapshot()
			if rt == nil {
				if problem == "" {
					problem = "no active ProviderRevision yet; " + c.lockStatus(ctx)
				}
				return false, problem, nil
			}
			ri, err := c.Resource(ProviderRevisionGVK, "")
			if err != nil {
				return false, "", err
			}
			rev, err := ri.Get(ctx, rt.Revision, metav1.GetOptions{})
			if err != nil {
				return false, SeenErr(err), nil
			}
			if h := Condition(rev, "RevisionHealthy"); h.Status != string(metav1.ConditionTrue) {
				return false, fmt.Sprintf("ProviderRevision %s RevisionHealthy=%s", rt.Revision, h), nil
			}
			name := "crossplane:provider:" + rt.Revision + ":system"
			crb, err := c.Kube.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, "the RBAC manager's binding: " + SeenErr(err), nil
			}
			for _, s := range crb.Subjects {
				if s.Kind == "ServiceAccount" && s.Namespace == CrossplaneNamespace && s.Name == rt.ServiceAccount {
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("ClusterRoleBinding %s binds %+v, not ServiceAccount %s", name, crb.Subjects, rt.ServiceAccount), nil
		})
	return rt, err
}

// lockStatus summarises Crossplane's dependency Lock, which says why a
// dependency is not installed (a registry it cannot reach, a constraint no
// tag meets).
func (c *Cluster) lockStatus(ctx context.Context) string {
	ri, err := c.Resource(lockGVK, "")
	if err != nil {
		return SeenErr(err)
	}
	u, err := ri.Get(ctx, "lock", metav1.GetOptions{})
	if err != nil {
		return "Lock: " + SeenErr(err)
	}
	return "Lock: Resolved=" + Condition(u, "Resolved").String()
}

// startProviderProcess runs the provider, under its bridge, in a network
// namespace of its own, as the service account the runtime config names,
// with the runtime config's arguments plus --debug and the harness's poll
// interval, and its webhook certificate where Crossplane's runtime mounts
// it (WEBHOOK_TLS_CERT_DIR for providers as old as v0.17.1).
func (c *Cluster) startProviderProcess(ctx context.Context, rt *providerRuntime) error {
	dir := c.path(ProviderProcess)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Wrapf(err, "cannot create %s", dir)
	}
	kubeconfig := c.path(ProviderProcess, "kubeconfig")
	if err := c.serviceAccountKubeconfig(ctx, CrossplaneNamespace, rt.ServiceAccount, kubeconfig); err != nil {
		return err
	}
	server, client, err := c.providerCerts(rt.Provider, rt.Revision)
	if err != nil {
		return err
	}
	serverDir, clientDir := c.path(ProviderProcess, "tls-server"), c.path(ProviderProcess, "tls-client")
	for d, kp := range map[string]*keyPair{serverDir: server, clientDir: client} {
		if err := writeFiles(d, tlsData(kp, c.xp.ca.Cert)); err != nil {
			return err
		}
	}

	// Unix socket paths are short (108 bytes on Linux).
	apiSock, webhookSock := c.path(ProviderProcess, "api.sock"), c.path(ProviderProcess, "webhook.sock")
	if len(webhookSock) > 100 {
		return errors.Errorf("the work directory's path is too long for a Unix socket: %s", webhookSock)
	}
	// This namespace's ends: the API server behind one socket, the
	// webhook Service's ClusterIP in front of the other.
	for _, f := range []Forward{
		{Listen: Endpoint{Network: netUnix, Address: apiSock}, Dial: Endpoint{Network: netTCP, Address: apiServerAddr()}},
		{Listen: Endpoint{Network: netTCP, Address: net.JoinHostPort(providerWebhookClusterIP, strconv.Itoa(providerWebhookPort))}, Dial: Endpoint{Network: netUnix, Address: webhookSock}},
	} {
		// Outlives Start's ctx: Stop ends it.
		fw, err := listenForward(context.WithoutCancel(ctx), f)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.forwards = append(c.forwards, fw)
		c.mu.Unlock()
	}
	// The provider's namespace's ends, which its bridge serves.
	spec, err := json.Marshal([]Forward{
		{Listen: Endpoint{Network: netTCP, Address: providerAPIAddr}, Dial: Endpoint{Network: netUnix, Address: apiSock}},
		{Listen: Endpoint{Network: netUnix, Address: webhookSock}, Dial: Endpoint{Network: netTCP, Address: providerWebhookAddr}},
	})
	if err != nil {
		return errors.Wrap(err, "cannot encode the bridge's forwards")
	}
	args := slices.Concat([]string{c.Tools.ProviderKubernetes}, rt.Args, []string{flagDebug, "--poll=" + providerPoll})
	return c.procs.startProcess(&Process{
		Name: ProviderProcess, Path: "/proc/self/exe", Args: args, NewNetns: true,
		Env: []string{
			EnvBridge + "=" + string(spec),
			"KUBECONFIG=" + kubeconfig,
			"WEBHOOK_TLS_CERT_DIR=" + serverDir,
			"TLS_SERVER_CERTS_DIR=" + serverDir,
			"TLS_CLIENT_CERTS_DIR=" + clientDir,
			"POD_NAMESPACE=" + CrossplaneNamespace,
		},
	})
}

// apiServerAddr is the API server's host:port.
func apiServerAddr() string { return strings.TrimPrefix(apiServerURL, "https://") }

// waitCRDEstablished waits for a CRD's Established condition.
func (c *Cluster) waitCRDEstablished(ctx context.Context, name string) error {
	ri, err := c.Resource(crdGVK, "")
	if err != nil {
		return err
	}
	return Wait(ctx, 2*time.Minute, "CRD "+name+" Established", func(ctx context.Context) (bool, string, error) {
		u, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, SeenErr(err), nil
		}
		e := Condition(u, "Established")
		return e.Status == string(metav1.ConditionTrue), "Established=" + e.String(), nil
	})
}

// providerConfig creates the ProviderConfig every composed Object names.
//
// The stack differs from deploy/post-install here. There it says
// InjectedIdentity: the provider reads the in-cluster config of the pod it
// runs in (rest.InClusterConfig: the API server's Service address from the
// environment and the token mounted into the pod). The harness runs the
// provider as a process, without a pod, so it hands over the same identity,
// the provider's own service account, as a kubeconfig in a Secret. The
// kubeconfig names the API server as the provider sees it from its
// namespace: its bridge's 127.0.0.1:6443.
func (c *Cluster) providerConfig(ctx context.Context, rt *providerRuntime) error {
	token, err := c.serviceAccountToken(ctx, CrossplaneNamespace, rt.ServiceAccount)
	if err != nil {
		return err
	}
	kc, err := kubeconfigBytes("https://"+providerAPIAddr, c.pki.CA.Cert, CrossplaneNamespace+"-"+rt.ServiceAccount, &clientcmdapi.AuthInfo{Token: token})
	if err != nil {
		return err
	}
	const secret, key = "provider-kubernetes-e2e-identity", "kubeconfig"
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: CrossplaneNamespace},
		Data:       map[string][]byte{key: kc},
	}
	if _, err := c.Kube.CoreV1().Secrets(CrossplaneNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrap(err, "cannot create the provider's kubeconfig Secret")
	}
	pc := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": ProviderConfigName},
		"spec": map[string]any{"credentials": map[string]any{
			"source":    "Secret",
			"secretRef": map[string]any{"namespace": CrossplaneNamespace, "name": secret, "key": key},
		}},
	}}
	pc.SetGroupVersionKind(ProviderConfigGVK)
	if _, err := c.Apply(ctx, pc); err != nil {
		return err
	}
	ri, err := c.Resource(ProviderConfigGVK, "")
	if err != nil {
		return err
	}
	return Wait(ctx, 30*time.Second, "ProviderConfig "+ProviderConfigName, func(ctx context.Context) (bool, string, error) {
		_, err := ri.Get(ctx, ProviderConfigName, metav1.GetOptions{})
		return err == nil, SeenErr(err), nil
	})
}
