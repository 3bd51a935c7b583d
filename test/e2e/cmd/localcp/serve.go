package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// exampleNamespace is where the example claims go.
const (
	exampleNamespace = "firebolt"
	// authInstance is the instance of examples/auth.
	authInstance = "firebolt"
)

// serve runs in the host's network namespace: it starts the stack in a new
// namespace and forwards 127.0.0.1:<port> to the stack's API server through
// a Unix socket, until SIGTERM.
func serve(dir string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:"+envOr("FIREBOLT_UP_API_PORT", "0"))
	if err != nil {
		return fmt.Errorf("cannot listen for the API server: %w", err)
	}
	defer l.Close() //nolint:errcheck // Closing on exit.
	child := harness.NetnsCommand([]string{"netns"})
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	if err := child.Start(); err != nil {
		return fmt.Errorf("cannot start the stack in a new network namespace (as root this needs CAP_SYS_ADMIN; "+
			"otherwise unprivileged user namespaces must be enabled): %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()

	sock := filepath.Join(dir, socketFile)
	go forward(l, func() (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", sock) })

	// Once the child reports the stack ready, publish the host kubeconfig.
	ready := filepath.Join(dir, stackReadyFile)
	published := false
	for {
		if !published {
			if kubectl, err := os.ReadFile(ready); err == nil {
				if err := hostKubeconfig(dir, l.Addr().String()); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, readyFile), kubectl, 0o644); err != nil {
					return err
				}
				published = true
				fmt.Printf("API server forwarded to https://%s\n", l.Addr())
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("the stack exited: %w", err)
		case <-ctx.Done():
			fmt.Println("stopping the stack...")
			_ = child.Process.Signal(syscall.SIGTERM)
			var err error
			select {
			case err = <-exited:
			case <-time.After(90 * time.Second):
				_ = child.Process.Kill()
				err = <-exited
			}
			fmt.Printf("the stack stopped (%v)\n", err)
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// hostKubeconfig writes the admin kubeconfig with the forwarded address.
func hostKubeconfig(dir, addr string) error {
	cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, stackDir, "kubeconfig"))
	if err != nil {
		return err
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + addr
	}
	return clientcmd.WriteToFile(*cfg, filepath.Join(dir, kubeconfigFile))
}

// netns runs in the private namespace: the stack, the examples, and the
// socket serve forwards to.
func netns(dir string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tools, err := harness.DecodeTools(os.Getenv(harness.EnvTools))
	if err != nil {
		return err
	}
	if err := harness.SetupLoopback(); err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, upTimeout)
	defer cancel()
	c, err := harness.Start(sctx, tools, filepath.Join(dir, stackDir), os.Stdout)
	if err != nil {
		return err
	}
	defer c.Stop()
	if err := applyExamples(sctx, c); err != nil {
		return err
	}
	if err := applyAuthExample(sctx, c); err != nil {
		return err
	}
	// The Prometheus examples/phased/sample/local checks against: it
	// scrapes the pods of namespace sample, so up{} returns data.
	prom, err := c.StartPrometheus(sctx, sampleNamespace, samplePrometheus)
	if err != nil {
		return err
	}
	defer prom.Stop()

	sock := filepath.Join(dir, socketFile)
	_ = os.Remove(sock)
	l, err := (&net.ListenConfig{}).Listen(ctx, "unix", sock)
	if err != nil {
		return err
	}
	defer l.Close() //nolint:errcheck // Closing on exit.
	go forward(l, func() (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "tcp", "127.0.0.1:6443") })
	if err := os.WriteFile(filepath.Join(dir, stackReadyFile), []byte(os.Getenv(envKubectl)), 0o644); err != nil {
		return err
	}
	<-ctx.Done()
	fmt.Println("stopping every process of the stack...")
	return nil
}

// applyExamples applies examples/claims in the example namespace, with the
// Secret the example engine reads its storage credentials from, and waits
// until the engine is Ready.
func applyExamples(ctx context.Context, c *harness.Cluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exampleNamespace}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return err
	}
	creds := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-s3-credentials", Namespace: exampleNamespace},
		StringData: map[string]string{"access-key-id": "local", "secret-access-key": "local"},
	}
	if _, err := c.Kube.CoreV1().Secrets(exampleNamespace).Create(ctx, creds, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return err
	}
	if err := c.ApplyFiles(ctx, exampleNamespace, filepath.Join(c.Tools.Root, "examples", "claims")); err != nil {
		return err
	}
	fmt.Print("applied examples/claims in namespace firebolt; waiting for the engine...\n")
	ri, err := c.Resource(harness.EngineGVK, exampleNamespace)
	if err != nil {
		return err
	}
	return harness.Wait(ctx, 5*time.Minute, "the example engine Ready", func(ctx context.Context) (bool, string, error) {
		u, err := ri.Get(ctx, "demo", metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		r, e := harness.Condition(u, "Ready"), harness.Condition(u, "EngineReady")
		return r.Status == "True" && e.Status == "True", fmt.Sprintf("Ready=%s EngineReady=%s", r, e), nil
	})
}

// applyAuthExample applies examples/auth (the original operator's
// auth-and-TLS example, with its admin Secret) in the example namespace
// and waits until the stack's cert-manager has issued the instance's
// signing key, its gateway certificate and its engine TLS anchor:
// AuthReady, GatewayTLSReady and EngineTLSReady True.
func applyAuthExample(ctx context.Context, c *harness.Cluster) error {
	if err := c.ApplyFiles(ctx, exampleNamespace, filepath.Join(c.Tools.Root, "examples", "auth")); err != nil {
		return err
	}
	fmt.Print("applied examples/auth in namespace firebolt; waiting for instance firebolt's AuthReady, GatewayTLSReady and EngineTLSReady...\n")
	ri, err := c.Resource(harness.InstanceGVK, exampleNamespace)
	if err != nil {
		return err
	}
	return harness.Wait(ctx, 5*time.Minute, "instance firebolt AuthReady=True, GatewayTLSReady=True and EngineTLSReady=True", func(ctx context.Context) (bool, string, error) {
		u, err := ri.Get(ctx, authInstance, metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		a, g, e := harness.Condition(u, "AuthReady"), harness.Condition(u, "GatewayTLSReady"), harness.Condition(u, "EngineTLSReady")
		const isTrue = string(metav1.ConditionTrue)
		return a.Status == isTrue && g.Status == isTrue && e.Status == isTrue,
			"AuthReady=" + a.String() + " GatewayTLSReady=" + g.String() + " EngineTLSReady=" + e.String(), nil
	})
}

// forward copies every connection l accepts to a connection dial opens.
func forward(l net.Listener, dial func() (net.Conn, error)) {
	for {
		in, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		go func() {
			defer in.Close() //nolint:errcheck // Best effort.
			out, err := dial()
			if err != nil {
				return
			}
			defer out.Close() //nolint:errcheck // Best effort.
			var wg sync.WaitGroup
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				_, _ = io.Copy(dst, src)
				// Half-close so the other direction can finish.
				if cw, ok := dst.(interface{ CloseWrite() error }); ok {
					_ = cw.CloseWrite()
				}
			}
			go pipe(out, in)
			go pipe(in, out)
			wg.Wait()
		}()
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
