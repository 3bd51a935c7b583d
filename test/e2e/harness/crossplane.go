package harness

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/crossplane/function-sdk-go/errors"
)

// Crossplane runs out of cluster, as its Helm chart would run it in one.
const (
	CrossplaneNamespace = "crossplane-system"

	// Crossplane's webhook (the Usage protection that refuses deleting an
	// engine class in use) must be reachable from the API server. The
	// API server resolves a webhook Service to its ClusterIP and port; with
	// the service range on the namespace's loopback and no kube-proxy, the
	// ClusterIP reaches Crossplane's listener directly when the Service
	// port is the one Crossplane listens on.
	webhookService   = "crossplane-webhooks"
	webhookClusterIP = "10.96.0.10"
	webhookPort      = 9445

	caSecret           = "crossplane-root-ca"
	serverSecret       = "crossplane-tls-server"
	clientSecret       = "crossplane-tls-client"
	crossplaneProbeURL = "http://127.0.0.1:8081/readyz"

	// FunctionAddress is where the function serves gRPC with mTLS.
	FunctionAddress = "127.0.0.1:9443"
	// FunctionMetricsAddress is where the function serves /metrics. The
	// RBAC manager holds :8080, the SDK's default.
	FunctionMetricsAddress = "127.0.0.1:8095"
	// CrossplaneMetricsAddress is where Crossplane serves /metrics: the
	// RBAC manager holds controller-runtime's default :8080.
	CrossplaneMetricsAddress = "127.0.0.1:" + crossplaneMetricsPort
	crossplaneMetricsPort    = "8085"
)

type crossplaneState struct {
	// ca is Crossplane's root CA: it signed Crossplane's client certificate
	// and, as the runtime controller the harness plays, the function's
	// server certificate.
	ca        *keyPair
	fnServer  *keyPair
	clientDir string
	fnDir     string
}

func (c *Cluster) crossplaneEnv(kubeconfig string) []string {
	return []string{
		"KUBECONFIG=" + kubeconfig,
		"POD_NAMESPACE=" + CrossplaneNamespace,
		"POD_SERVICE_ACCOUNT=crossplane",
		"TLS_CA_SECRET_NAME=" + caSecret,
		"TLS_SERVER_SECRET_NAME=" + serverSecret,
		"TLS_CLIENT_SECRET_NAME=" + clientSecret,
		"ENABLE_WEBHOOKS=true",
	}
}

// startCrossplane runs `crossplane core init` and `crossplane core start`
// with the External package runtime.
func (c *Cluster) startCrossplane(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: CrossplaneNamespace}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return errors.Wrap(err, "cannot create the Crossplane namespace")
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: webhookService, Namespace: CrossplaneNamespace},
		Spec: corev1.ServiceSpec{
			ClusterIP: webhookClusterIP,
			Ports:     []corev1.ServicePort{{Name: "webhooks", Port: webhookPort, TargetPort: intstr.FromInt32(webhookPort)}},
		},
	}
	if _, err := c.Kube.CoreV1().Services(CrossplaneNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return errors.Wrap(err, "cannot create the Crossplane webhook Service")
	}

	// init runs as admin: in a cluster it runs in an init container whose
	// role can create CRDs and webhook configurations anyway.
	env := append(c.crossplaneEnv(c.Kubeconfig),
		"CRDS_PATH="+c.Tools.CrossplaneCRDs(),
		"WEBHOOK_CONFIGS_PATH="+c.Tools.CrossplaneWebhookConfigurations(),
		"WEBHOOK_SERVICE_NAME="+webhookService,
		"WEBHOOK_SERVICE_NAMESPACE="+CrossplaneNamespace,
		"WEBHOOK_SERVICE_PORT="+strconv.Itoa(webhookPort),
	)
	// The first init always fails: it applies the Lock object right after
	// creating the Lock CRD, before the API server serves it. In a cluster a
	// pod restart hides that; here the harness retries.
	var out []byte
	err := Wait(ctx, 90*time.Second, "crossplane core init", func(ctx context.Context) (bool, string, error) {
		var err error
		out, err = runOnce(ctx, c.Dir, env, c.Tools.CrossplaneCore, "core", "init")
		if err != nil {
			return false, SeenErr(err) + ": " + lastLine(out), nil
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}

	xp := &crossplaneState{clientDir: c.path("crossplane-client-certs"), fnDir: c.path("function-certs")}
	c.xp = xp
	serverDir := c.path("crossplane-server-certs")
	for secret, dir := range map[string]string{serverSecret: serverDir, clientSecret: xp.clientDir} {
		s, err := c.Kube.CoreV1().Secrets(CrossplaneNamespace).Get(ctx, secret, metav1.GetOptions{})
		if err != nil {
			return errors.Wrapf(err, "cannot read Secret %s that core init made", secret)
		}
		if err := writeFiles(dir, map[string][]byte{
			"tls.crt": s.Data["tls.crt"], "tls.key": s.Data["tls.key"], "ca.crt": s.Data["ca.crt"],
		}); err != nil {
			return err
		}
	}
	s, err := c.Kube.CoreV1().Secrets(CrossplaneNamespace).Get(ctx, caSecret, metav1.GetOptions{})
	if err != nil {
		return errors.Wrapf(err, "cannot read Secret %s that core init made", caSecret)
	}
	if xp.ca, err = parseKeyPair(s.Data["tls.crt"], s.Data["tls.key"]); err != nil {
		return errors.Wrapf(err, "cannot parse Crossplane's root CA")
	}

	kubeconfig, err := c.crossplaneIdentity(ctx)
	if err != nil {
		return err
	}
	if err := c.startCrossplaneProcess(kubeconfig, serverDir); err != nil {
		return err
	}
	return c.WaitCrossplaneReady(ctx)
}

// startCrossplaneProcess starts Crossplane on its default flags, as the
// product must work on them, plus any WithCrossplaneFlags adds. Its
// --poll-interval (1m) paces, with realtime compositions, only its Usage
// controller, which on every pass GETs the used object and PUTs it back
// unchanged (internal/controller/protection/usage/reconciler.go): with one
// Usage per class that has engines (class.InUse) that is two requests a
// minute per class. The end-to-end tests and `make up` used to set 30m,
// when every engine composed a Usage of its class.
func (c *Cluster) startCrossplaneProcess(kubeconfig, serverDir string) error {
	env := append(c.crossplaneEnv(kubeconfig),
		"PACKAGE_RUNTIME=External",
		"WEBHOOK_PORT="+strconv.Itoa(webhookPort),
		"TLS_SERVER_CERTS_DIR="+serverDir,
		"TLS_CLIENT_CERTS_DIR="+c.xp.clientDir,
		"XPKG_CACHE_DIR="+c.path("xpkg-cache"),
		"METRICS_PORT="+crossplaneMetricsPort,
		"HEALTH_PROBE_PORT=8081",
	)
	env = append(env, collector("1GiB")...)
	err := c.procs.start("crossplane", c.Tools.CrossplaneCore, append([]string{"core", "start", flagDebug}, c.crossplaneFlags...), env...)
	return err
}

// WaitCrossplaneReady waits for Crossplane's readiness probe, which passes
// once its webhook server is serving.
func (c *Cluster) WaitCrossplaneReady(ctx context.Context) error {
	return c.waitHTTP(ctx, "Crossplane /readyz", crossplaneProbeURL, nil, nil)
}

// functionCerts signs the function's server certificate with Crossplane's
// root CA, as Crossplane's Deployment runtime would, for the loopback
// address Crossplane dials. ca.crt lets the function verify Crossplane's
// client certificate, which the same CA signed.
func (c *Cluster) functionCerts() error {
	host, _, _ := net.SplitHostPort(FunctionAddress)
	kp, err := issue(c.xp.ca, certSpec{
		CommonName: "function-firebolt", Server: true,
		IPs:      []net.IP{net.ParseIP(host)},
		DNSNames: []string{"localhost"},
	})
	if err != nil {
		return err
	}
	c.xp.fnServer = kp
	return writeFiles(c.xp.fnDir, tlsData(kp, c.xp.ca.Cert))
}

// startFunction applies deploy/ as a user would, gives the function a
// kubeconfig for the service account deploy/ binds (not admin: the test
// proves the RBAC there is enough), and starts it.
func (c *Cluster) startFunction(ctx context.Context) error {
	if err := c.ApplyFiles(ctx, "", filepath.Join(c.Tools.Root, "deploy")); err != nil {
		return errors.Wrap(err, "cannot apply deploy/")
	}
	if err := c.functionCerts(); err != nil {
		return err
	}
	kubeconfig := c.path("function-kubeconfig")
	if err := c.serviceAccountKubeconfig(ctx, CrossplaneNamespace, "function-firebolt", kubeconfig); err != nil {
		return err
	}
	err := c.procs.start("function", c.Tools.Function, []string{
		flagDebug, "--address=" + FunctionAddress, "--tls-certs-dir=" + c.xp.fnDir, "--metrics-address=" + FunctionMetricsAddress,
	}, "KUBECONFIG="+kubeconfig, "POD_NAMESPACE="+CrossplaneNamespace)
	if err != nil {
		return err
	}
	return c.WaitFunctionServing(ctx)
}

// StartFunctionReplica runs a second function process, as a second replica
// of the function's Deployment would run: the same service account and
// namespace, its gRPC server on address (without TLS: Crossplane never
// calls it) and its metrics on metricsAddress. It is the caller's, to stop.
func (c *Cluster) StartFunctionReplica(ctx context.Context, name, address, metricsAddress string) (*Process, error) {
	p := &Process{
		Name: name,
		Path: c.Tools.Function,
		Args: []string{flagDebug, "--insecure", "--address=" + address, "--metrics-address=" + metricsAddress},
		Env:  []string{"KUBECONFIG=" + c.path("function-kubeconfig"), "POD_NAMESPACE=" + CrossplaneNamespace},
		Log:  c.path("logs", name+".log"),
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	if err := c.waitHTTP(ctx, name+" serving metrics", "http://"+metricsAddress+"/metrics", nil, p); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// WaitFunctionServing waits until the function accepts connections.
func (c *Cluster) WaitFunctionServing(ctx context.Context) error {
	return Wait(ctx, 60*time.Second, "the function listening on "+FunctionAddress, func(ctx context.Context) (bool, string, error) {
		if err := c.procs.exitedEarly(); err != nil {
			return false, "", err
		}
		d := net.Dialer{Timeout: time.Second}
		conn, err := d.DialContext(ctx, "tcp", FunctionAddress)
		if err != nil {
			return false, SeenErr(err), nil
		}
		_ = conn.Close()
		return true, "", nil
	})
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as a
// service account with a token the API server issues for it.
func (c *Cluster) serviceAccountKubeconfig(ctx context.Context, ns, name, path string) error {
	token, err := c.serviceAccountToken(ctx, ns, name)
	if err != nil {
		return err
	}
	return writeKubeconfig(path, apiServerURL, c.pki.CA.Cert, ns+"-"+name, &clientcmdapi.AuthInfo{Token: token})
}

// serviceAccountToken is a token the API server issues for a service
// account, valid for a week.
func (c *Cluster) serviceAccountToken(ctx context.Context, ns, name string) (string, error) {
	var token string
	err := Wait(ctx, 30*time.Second, "a token for ServiceAccount "+ns+"/"+name, func(ctx context.Context) (bool, string, error) {
		exp := int64(7 * 24 * 3600)
		tr, err := c.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
		if kerrors.IsNotFound(err) {
			return false, "service account not found yet", nil
		}
		if err != nil {
			return false, "", err
		}
		token = tr.Status.Token
		return true, "", nil
	})
	return token, err
}

// RestartCrossplane starts Crossplane again after Kill or Stop, with the
// same flags and certificates, and waits until it is ready.
func (c *Cluster) RestartCrossplane(ctx context.Context) error {
	if err := c.Process("crossplane").Start(); err != nil {
		return err
	}
	return c.WaitCrossplaneReady(ctx)
}

// RestartFunction starts the function again after Kill or Stop and waits
// until it serves.
func (c *Cluster) RestartFunction(ctx context.Context) error {
	if err := c.Process("function").Start(); err != nil {
		return err
	}
	return c.WaitFunctionServing(ctx)
}

func lastLine(b []byte) string {
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}
