package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/crossplane/function-sdk-go/errors"
)

// Fixed addresses inside the namespace.
const (
	apiServerURL = "https://127.0.0.1:6443"
	etcdURL      = "http://127.0.0.1:2379"
)

// NodeName is the simulated node. Its pod range is on the namespace's loopback, and it
// carries the label the example engine class selects.
const NodeName = "kwok-node-0"

// NodePods is how many pods NodeName holds.
const NodePods = 2000

// startControlPlane starts etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and KWOK, registers a simulated node, and waits until each
// is serving.
func (c *Cluster) startControlPlane(ctx context.Context) error {
	p, err := newPKI(c.path("pki"))
	if err != nil {
		return err
	}
	c.pki = p
	if err := writeKubeconfig(c.Kubeconfig, apiServerURL, p.CA.Cert, "admin", &clientcmdapi.AuthInfo{
		ClientCertificateData: p.Admin.Cert, ClientKeyData: p.Admin.Key,
	}); err != nil {
		return err
	}
	pk := c.path("pki")
	f := func(n string) string { return filepath.Join(pk, n) }
	t := c.Tools

	if err := c.procs.start("etcd", t.Etcd, []string{
		"--name=e2e", "--data-dir=" + c.path("etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=e2e=http://127.0.0.1:2380",
		// Test data: losing it on a machine crash costs nothing.
		"--unsafe-no-fsync", "--log-level=warn",
	}, collector("1GiB")...); err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, "etcd /health", etcdURL+"/health", nil, nil); err != nil {
		return err
	}

	audit, err := c.auditFlags()
	if err != nil {
		return err
	}
	if err := c.procs.start("kube-apiserver", t.KubeAPIServer, append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--secure-port=6443", "--advertise-address=127.0.0.1",
		"--tls-cert-file=" + f("apiserver.crt"), "--tls-private-key-file=" + f("apiserver.key"),
		"--client-ca-file=" + f("ca.crt"),
		// Without the request-header flags the controller-manager and the
		// scheduler log a stream of "missing content for CA bundle".
		"--requestheader-client-ca-file=" + f("ca.crt"), "--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + f("front-proxy-client.crt"), "--proxy-client-key-file=" + f("front-proxy-client.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f("sa.pub"), "--service-account-signing-key-file=" + f("sa.key"),
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC", "--allow-privileged=true",
		// No kube-proxy and no real endpoints for the kubernetes Service.
		"--endpoint-reconciler-type=none",
		"--v=1",
	}, audit...), collector("4GiB")...); err != nil {
		return err
	}
	if err := c.waitAPI(ctx); err != nil {
		return err
	}

	common := []string{"--kubeconfig=" + c.Kubeconfig, "--authentication-kubeconfig=" + c.Kubeconfig,
		"--authorization-kubeconfig=" + c.Kubeconfig, "--bind-address=127.0.0.1", "--leader-elect=false", "--v=1"}
	if err := c.procs.start("kube-controller-manager", t.KubeControllerManager, append(common,
		"--secure-port=10257", "--controllers=*",
		"--service-account-private-key-file="+f("sa.key"), "--root-ca-file="+f("ca.crt"),
		"--use-service-account-credentials=false",
	), collector("1GiB")...); err != nil {
		return err
	}
	if err := c.procs.start("kube-scheduler", t.KubeScheduler, append(common, "--secure-port=10259")); err != nil {
		return err
	}
	stages, err := c.kwokStages()
	if err != nil {
		return err
	}
	if err := c.procs.start("kwok", t.KWOK, []string{
		"--kubeconfig=" + c.Kubeconfig, "--config=" + stages,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr=" + PodCIDR, "--node-ip=127.0.0.1", "--node-lease-duration-seconds=40",
	}); err != nil {
		return err
	}
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // Probing a local health endpoint.
	if err := c.waitHTTP(ctx, "kube-controller-manager /healthz", "https://127.0.0.1:10257/healthz", insecure, nil); err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, "kube-scheduler /healthz", "https://127.0.0.1:10259/healthz", insecure, nil); err != nil {
		return err
	}
	return c.addNode(ctx)
}

// waitAPI waits for /readyz and builds the admin clients.
func (c *Cluster) waitAPI(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return errors.Wrap(err, "cannot load the admin kubeconfig")
	}
	cfg.QPS, cfg.Burst = 100, 200
	// Every request is bounded, so no wait can hang on a stuck call.
	cfg.Timeout = 30 * time.Second
	// Every XRD read warns that apiextensions.crossplane.io/v1 is deprecated;
	// the product uses it on purpose (claims need it).
	cfg.WarningHandler = rest.NoWarnings{}
	if c.wrap != nil {
		cfg.Wrap(c.wrap)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return errors.Wrap(err, "cannot create a clientset")
	}
	err = Wait(ctx, 90*time.Second, "kube-apiserver /readyz", func(ctx context.Context) (bool, string, error) {
		if err := c.procs.exitedEarly(); err != nil {
			return false, "", err
		}
		b, err := kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, SeenErr(err), nil
		}
		return true, string(b), nil
	})
	if err != nil {
		return err
	}
	c.Admin, c.Kube = cfg, kube
	return c.initClients()
}

// waitHTTP waits for url to answer 200. It stops early when one of the
// shared processes exits, or own (the scenario's own process, when not nil).
func (c *Cluster) waitHTTP(ctx context.Context, what, url string, client *http.Client, own *Process) error {
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Second}
	}
	return Wait(ctx, 60*time.Second, what, func(ctx context.Context) (bool, string, error) {
		if err := c.procs.exitedEarly(); err != nil {
			return false, "", err
		}
		if own != nil {
			if ok, err := own.Running(); !ok {
				return false, "", err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, "", err
		}
		rsp, err := client.Do(req)
		if err != nil {
			return false, SeenErr(err), nil
		}
		_ = rsp.Body.Close()
		return rsp.StatusCode == http.StatusOK, rsp.Status, nil
	})
}

// addNode registers the KWOK node and a default StorageClass, and waits
// until the node is Ready and the default ServiceAccount exists (pods are
// refused before it does).
func (c *Cluster) addNode(ctx context.Context) error {
	// Room for NodePods pods of the example engine class (2 CPU, 8 GiB
	// each), so that make scale's largest N can hold two generations of
	// every engine at once, as a class edit needs.
	big := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(2*NodePods, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(8<<30*NodePods, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(NodePods, resource.DecimalSI),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok",
				// What examples/claims/engineclass.yaml selects.
				"pool": "firebolt-engines",
			},
		},
		Spec:   corev1.NodeSpec{PodCIDR: PodCIDR, PodCIDRs: []string{PodCIDR}},
		Status: corev1.NodeStatus{Allocatable: big, Capacity: big},
	}
	if _, err := c.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return errors.Wrap(err, "cannot create the KWOK node")
	}
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner: provisionerName,
	}
	if _, err := c.Kube.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		return errors.Wrap(err, "cannot create the default StorageClass")
	}
	err := Wait(ctx, 60*time.Second, "KWOK node Ready", func(ctx context.Context) (bool, string, error) {
		if err := c.procs.exitedEarly(); err != nil {
			return false, "", err
		}
		n, err := c.Kube.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, SeenErr(err), nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue, fmt.Sprintf("Ready=%s (%s)", cond.Status, cond.Message), nil
			}
		}
		return false, "no Ready condition", nil
	})
	if err != nil {
		return err
	}
	return Wait(ctx, 60*time.Second, "the default ServiceAccount", func(ctx context.Context) (bool, string, error) {
		_, err := c.Kube.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if kerrors.IsNotFound(err) {
			return false, "not created yet", nil
		}
		return err == nil, "", err
	})
}

// writeKubeconfig writes a kubeconfig for one user of the API server at
// server.
func writeKubeconfig(path, server string, ca []byte, user string, auth *clientcmdapi.AuthInfo) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return errors.Wrapf(err, "cannot create the directory of %s", path)
	}
	return errors.Wrapf(clientcmd.WriteToFile(*kubeconfig(server, ca, user, auth), path), "cannot write %s", path)
}

// kubeconfigBytes is writeKubeconfig's content.
func kubeconfigBytes(server string, ca []byte, user string, auth *clientcmdapi.AuthInfo) ([]byte, error) {
	b, err := clientcmd.Write(*kubeconfig(server, ca, user, auth))
	return b, errors.Wrap(err, "cannot encode a kubeconfig")
}

func kubeconfig(server string, ca []byte, user string, auth *clientcmdapi.AuthInfo) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["firebolt-e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = auth
	cfg.Contexts["firebolt-e2e"] = &clientcmdapi.Context{Cluster: "firebolt-e2e", AuthInfo: user}
	cfg.CurrentContext = "firebolt-e2e"
	return cfg
}

// HoldLabel keeps a pod Pending, never Ready, for as long as it carries the
// label: the tests hold a new generation's pods to see what the engine does
// before they are Ready, then remove the label from the pods.
const HoldLabel = "e2e-hold"

// kwokStages writes KWOK's stages with the pod-ready stage skipping held
// pods.
func (c *Cluster) kwokStages() (string, error) {
	objs, err := ReadObjects(c.Tools.KWOKStages)
	if err != nil {
		return "", err
	}
	found := false
	for _, u := range objs {
		if u.GetName() != "pod-ready" {
			continue
		}
		exprs, _, _ := unstructured.NestedSlice(u.Object, "spec", "selector", "matchExpressions")
		exprs = append(exprs, map[string]any{"key": `.metadata.labels["` + HoldLabel + `"]`, "operator": "DoesNotExist"})
		if err := unstructured.SetNestedSlice(u.Object, exprs, "spec", "selector", "matchExpressions"); err != nil {
			return "", errors.Wrap(err, "cannot edit the pod-ready stage")
		}
		found = true
	}
	if !found {
		return "", errors.Errorf("%s has no pod-ready stage", c.Tools.KWOKStages)
	}
	path := c.path("kwok-stages.yaml")
	return path, errors.Wrap(os.WriteFile(path, []byte(ToYAML(objs...)), 0o644), "cannot write the KWOK stages")
}

// collector is the Go collector's setting for a process of the stack that
// allocates much and keeps a large heap: collecting at 400% heap growth, up
// to a memory limit, instead of the default 100%. In an end-to-end run
// kube-apiserver was the most CPU of any process (514 CPU-s of the package's
// 823) with about a quarter of its profile in the collector (its resident
// memory 1.9 GB at the default). The processes behave the same; the machine
// runs the tests' compiles beside them.
func collector(limit string) []string {
	return []string{"GOGC=400", "GOMEMLIMIT=" + limit}
}

// auditPolicy logs writes at the Metadata level (who, which object, the
// request URI with its field manager, the response code) and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// auditFlags are kube-apiserver's flags for WithAuditLog; none without it.
func (c *Cluster) auditFlags() ([]string, error) {
	if c.auditLog == "" {
		return nil, nil
	}
	policy := c.path("audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, errors.Wrap(err, "cannot write the audit policy")
	}
	// The default, blocking mode: every line is in the file when the
	// request is answered, so a phase's writes can be read at its end.
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + c.auditLog,
		"--audit-log-format=json", "--audit-log-maxsize=0"}, nil
}
