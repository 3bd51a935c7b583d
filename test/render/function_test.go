package render

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/internal/xptools"
)

// startFunction builds cmd/function and serves it on a free loopback port
// with --insecure and no cluster access until the test ends; make render
// runs this test.
func startFunction(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "function")
	build := exec.Command("go", "build", "-o", bin, "./cmd/function")
	build.Dir = xptools.Root()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("cannot build the function: %v\n%s", err, out)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()

	log, err := os.Create(filepath.Join(dir, "function.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--insecure", "--debug", "--address="+addr, "--metrics-address=")
	cmd.Stdout, cmd.Stderr = log, log
	// No cluster access while rendering: composing must not need it.
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("function log:\n%s", b)
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("function did not listen on %s within 30s: %v", addr, err)
		}
		if cmd.ProcessState != nil {
			t.Fatalf("function exited early: %v", cmd.ProcessState)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func filesFor(kind string) (string, string, error) {
	k, ok := v1alpha1.CompositeKindOf(kind)
	if !ok {
		return "", "", fmt.Errorf("no Composition for kind %q", kind)
	}
	return "composition/" + k.Composition, k.XRD(), nil
}
