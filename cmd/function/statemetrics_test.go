package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStateMetricsNeedTheLeaseNamespace: with a Kubernetes client and a
// metrics listener, the state metrics are on, and without a namespace for
// their Lease the function refuses to start, naming the flag, the variable
// and the way out.
func TestStateMetricsNeedTheLeaseNamespace(t *testing.T) {
	bin := buildFunction(t)
	cmd := exec.CommandContext(t.Context(), bin, "--insecure", "--address="+freeAddr(t), "--metrics-address="+freeAddr(t))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+fakeAPIServer(t), "POD_NAMESPACE=")
	out, err := cmd.CombinedOutput()
	for _, want := range []string{"--state-metrics-lease-namespace", "POD_NAMESPACE", "--no-state-metrics"} {
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("want an error naming %s, got err=%v:\n%s", want, err, out)
		}
	}
}

// TestStopsOnSIGTERMWithStateMetrics: the function catches SIGTERM to
// release its Lease, then ends as the signal ends it, promptly, whether or
// not the Lease could be reached.
func TestStopsOnSIGTERMWithStateMetrics(t *testing.T) {
	bin := buildFunction(t)
	for name, args := range map[string][]string{
		"StateMetrics":   nil,
		"NoStateMetrics": {"--no-state-metrics"},
	} {
		t.Run(name, func(t *testing.T) {
			addr, metricsAddr := freeAddr(t), freeAddr(t)
			cmd := exec.CommandContext(t.Context(), bin, append([]string{"--insecure", "--address=" + addr, "--metrics-address=" + metricsAddr}, args...)...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+fakeAPIServer(t), "POD_NAMESPACE=fns")
			var out strings.Builder
			stop := startCommand(t, cmd, &out)
			waitListening(t, addr)
			waitListening(t, metricsAddr)
			err := stop(syscall.SIGTERM)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Errorf("exit after SIGTERM: %v, want death by SIGTERM\n%s", err, out.String())
			}
		})
	}
}

// startCommand starts cmd with its output in out, and returns the way to
// stop it: send sig and wait, at most 30 s, for it to exit, returning how
// it exited. The test fails if it does not.
func startCommand(t *testing.T, cmd *exec.Cmd, out *strings.Builder) func(sig syscall.Signal) error {
	t.Helper()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return func(sig syscall.Signal) error {
		t.Helper()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		select {
		case err := <-exited:
			return err
		case <-ctx.Done():
			t.Fatalf("no exit after %s:\n%s", sig, out.String())
			return nil
		}
	}
}
