// Command localcp runs the end-to-end harness's control plane for a person:
// `make up` and `make down`.
//
//	localcp up     build what is missing, start the stack in the background with
//	               the packages installed and the example claims applied, wait
//	               until the example engine is Ready, print how to use it
//	localcp down   stop everything `up` started
//
// The stack runs in a private network namespace, as in the tests: the fake
// engine pods' IPs exist only there, which is what lets the API server's
// pods/proxy reach the fake metrics servers while nothing leaves the
// machine. Three processes make that usable from the host's shell:
//
//	localcp serve   (host namespace, detached) listens on 127.0.0.1:<port> and
//	                forwards each connection to a Unix socket in the state
//	                directory; Unix sockets live in the file system, not in a
//	                network namespace, so they cross the boundary
//	localcp netns   (private namespace, child of serve) runs the stack and
//	                forwards that Unix socket to the API server on 127.0.0.1:6443
//
// The API server's certificate names 127.0.0.1, so the host kubeconfig
// verifies it as usual. `down` signals serve, which stops the child, which
// stops every process of the stack; each child also dies with its parent.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Files in the state directory.
const (
	pidFile        = "localcp.pid"
	logFile        = "localcp.log"
	kubeconfigFile = "kubeconfig"
	socketFile     = "api.sock"
	stackDir       = "stack"
	buildDir       = "build"
	readyFile      = "ready"
	stackReadyFile = "stack-ready"
	// envKubectl is the path of the kubectl up built, which the stack
	// publishes in stackReadyFile once ready.
	envKubectl = "FIREBOLT_UP_KUBECTL"
)

// The seed 004 sample (examples/phased/sample) runs in sampleNamespace and
// checks against a Prometheus on samplePrometheus (examples/phased/sample/local).
const (
	sampleNamespace  = "sample"
	samplePrometheus = "127.0.0.1:9090"
)

// upTimeout bounds `up` once the tools are built: starting the stack and
// rolling the example engine out.
const upTimeout = 10 * time.Minute

func main() {
	// The stack runs provider-kubernetes under a copy of this command (its
	// network namespace's bridge).
	harness.MaybeRunBridge()
	if len(os.Args) < 2 {
		usage()
	}
	dir := stateDir()
	var err error
	switch os.Args[1] {
	case "up":
		err = up(dir)
	case "down":
		err = down(dir)
	case "serve":
		err = serve(dir)
	case "netns":
		err = netns(dir)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localcp:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: localcp up|down  (state in $FIREBOLT_UP_DIR, default ~/.cache/firebolt-crossplane/up)")
	os.Exit(2)
}

func stateDir() string {
	if d := os.Getenv("FIREBOLT_UP_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "firebolt-crossplane", "up")
}

// up builds, starts serve detached, and waits for it to report ready.
func up(dir string) error {
	if pid, ok := running(dir); ok {
		fmt.Printf("already running (pid %d)\n\n", pid)
		return printUsage(dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	fmt.Println("building what is missing (a fresh machine compiles Kubernetes, etcd, KWOK and Crossplane once: 15-25 minutes)...")
	tools, err := harness.Prepare(ctx, filepath.Join(dir, buildDir), os.Stdout)
	if err != nil {
		return err
	}
	// The stack runs no kubectl; its user does.
	kubectl, err := harness.Tool(ctx, "kubectl", os.Stdout)
	if err != nil {
		return err
	}
	fmt.Printf("built in %s; starting the control plane...\n", time.Since(start).Round(time.Second))

	log, err := os.Create(filepath.Join(dir, logFile))
	if err != nil {
		return err
	}
	defer log.Close()                              //nolint:errcheck // Only the child writes to it.
	cmd := exec.Command("/proc/self/exe", "serve") //nolint:noctx // The server outlives this command by design; `make down` stops it.
	cmd.Env = append(os.Environ(), harness.EnvTools+"="+tools.Encode(), "FIREBOLT_UP_DIR="+dir, envMarker+"="+dir, envKubectl+"="+kubectl)
	cmd.Stdout, cmd.Stderr = log, log
	// Detached: it outlives this command and the shell that ran it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Follow the log until ready, failed, or the time is up.
	deadline := time.After(upTimeout)
	var shown int64
	for {
		shown = follow(filepath.Join(dir, logFile), shown)
		if _, err := os.Stat(filepath.Join(dir, readyFile)); err == nil {
			fmt.Printf("\nup in %s\n\n", time.Since(start).Round(time.Second))
			return printUsage(dir)
		}
		select {
		case err := <-exited:
			follow(filepath.Join(dir, logFile), shown)
			return fmt.Errorf("the control plane exited before it was ready (%w); everything it logged is in %s", err, dir)
		case <-deadline:
			_ = down(dir)
			return fmt.Errorf("not ready after %s; logs are in %s", upTimeout, dir)
		case <-ctx.Done():
			_ = down(dir)
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// follow prints what was appended to path since offset and returns the new
// offset.
func follow(path string, offset int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return offset
	}
	defer f.Close() //nolint:errcheck // Read only.
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset
	}
	n, _ := io.Copy(os.Stdout, f)
	return offset + n
}

func printUsage(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, readyFile))
	if err != nil {
		return err
	}
	kubectl := strings.TrimSpace(string(b))
	kc := filepath.Join(dir, kubeconfigFile)
	fmt.Printf(`A local control plane is running: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and KWOK (simulated node and pods), Crossplane v2.4.0 with
configuration-firebolt and the packages it depends on installed from .xpkg
files: its function, and provider-kubernetes %[4]s (mirrored into a loopback
registry; it runs with server-side apply, and its ProviderConfig "%[5]s" is
in place for the Objects PhasedRollouts compose). cert-manager %[8]s runs
its Certificate and SelfSigned/CA issuer controllers (no webhook: nothing
validates cert-manager objects on admission); the ClusterIssuer "%[9]s", a
CA, is Ready. The example instance, engine class and engine from
examples/claims/ are in namespace firebolt; the engine "demo" is Ready. So
is examples/auth/: instance "firebolt" with authentication, gateway TLS
and engine TLS on (the original operator's auth-and-TLS example), its
signing key, gateway certificate and engine TLS anchor issued by
cert-manager (AuthReady, GatewayTLSReady and EngineTLSReady True).

Use it from this shell (any kubectl works; this one is v1.36.2):

  export KUBECONFIG=%[1]s
  alias kubectl=%[2]s
  kubectl get configurations,functions,providers
  kubectl get fire,firengc,fireng -n firebolt
  kubectl get statefulsets,services,configmaps,pods -n firebolt -l firebolt.io/engine=demo
  kubectl get objects.kubernetes.crossplane.io
  kubectl get clusterissuers,certificates,certificaterequests -A
  kubectl get fire firebolt -n firebolt -o jsonpath='{.status.auth}'

The kubectl plugin (docs/kubectl-plugin.md), from the repository's root:

  GOBIN=$PWD/_out/bin go install ./cmd/kubectl-firebolt && export PATH=$PWD/_out/bin:$PATH
  kubectl firebolt engine list -n firebolt -o wide
  kubectl firebolt engine status demo -n firebolt
  kubectl firebolt engine wait demo -n firebolt --timeout 10m

Add an engine to the instance with auth: it mounts the admin password and
the signing key, and its config.yaml names them:

  kubectl apply -n firebolt -f - <<'YAML'
  apiVersion: compute.firebolt.io/v1alpha1
  kind: FireboltEngine
  metadata: {name: secure}
  spec: {instanceRef: firebolt, replicas: 1}
  YAML

Watch a blue-green rollout. In one shell:

  kubectl get fireng demo -n firebolt -w

in another:

  kubectl get statefulsets,pods -n firebolt -l firebolt.io/engine=demo -w

then change the engine; any change to its spec rolls a new generation
(demo-g<N+1>), moves the demo-service selector once its pods are Ready,
drains and deletes the old one:

  kubectl patch fireng demo -n firebolt --type=merge -p '{"spec":{"replicas":3}}'

or edit examples/claims/engine.yaml and apply it with -n firebolt. The
simulated engine pods report no running queries, so draining ends at once.

Seed 004's phased rollout of a StatefulSet someone else owns (a Prometheus
on %[6]s scrapes namespace %[7]s for its checks):

  kubectl apply -k examples/phased/sample/local/
  kubectl patch sts web -n sample --patch '{"spec":{"template":{"metadata":{"labels":{"trigger-rollout":"'$(date +%%s)'"}}}}}'
  kubectl get phasedrollout phasedrollout-sample -o yaml -w -n sample

Logs of every process: %[3]s
Stop everything: make down
`, kc, kubectl, filepath.Join(dir, stackDir, "logs"), harness.ProviderKubernetesVersion, harness.ProviderConfigName, samplePrometheus, sampleNamespace,
		harness.CertManagerVersion, harness.CAIssuer)
	return nil
}

// running returns the pid of a live serve process of dir.
func running(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return 0, false
	}
	return pid, true
}

// down stops serve and waits until it and every process it started are
// gone.
func down(dir string) error {
	pid, ok := running(dir)
	if !ok {
		fmt.Println("nothing running")
		return leftovers(dir)
	}
	fmt.Printf("stopping (pid %d)...\n", pid)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil {
		fmt.Printf("pid %d still running after 2m; killing it\n", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := leftovers(dir); err != nil {
		return err
	}
	for _, f := range []string{pidFile, readyFile, stackReadyFile, kubeconfigFile, socketFile} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	// The etcd data and certificates are not worth keeping; the logs are.
	for _, d := range []string{filepath.Join(dir, stackDir, "etcd"), filepath.Join(dir, stackDir, "pki"), filepath.Join(dir, buildDir)} {
		_ = os.RemoveAll(d)
	}
	fmt.Println("stopped; nothing left running. Logs stay in " + dir)
	return nil
}

// leftovers waits briefly for processes of the stack to exit (each dies with
// its parent) and fails if any remain.
func leftovers(dir string) error {
	var left []string
	for range 50 {
		left = processesUsing(dir)
		if len(left) == 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("processes of the stack still running: %s", strings.Join(left, "; "))
}

// envMarker is set on serve and so inherited by every process of the stack:
// down finds any that survived by it.
const envMarker = "FIREBOLT_UP_STACK"

// processesUsing lists the processes that carry envMarker for dir.
func processesUsing(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains("\x00"+string(env)+"\x00", "\x00"+envMarker+"="+dir+"\x00") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(b), "\x00", " ")))
	}
	return out
}
