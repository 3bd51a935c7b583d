package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// envWork carries the work directory from the parent to the re-executed
// copy.
const envWork = "FIREBOLT_E2E_WORK"

// envKeep, when set, keeps the work directory of a passing run too.
const envKeep = "FIREBOLT_E2E_KEEP"

// startTimeout bounds bringing the stack up inside the namespace.
const startTimeout = 8 * time.Minute

// cp is the control plane every scenario shares. Scenarios keep to their
// own namespaces.
var cp *harness.Cluster

// TestMain runs twice. The test binary go test starts builds what is missing
// (tools into the cache, the function and both packages from this tree)
// while it can still reach the module proxy, then runs itself again in a
// new network namespace and exits with that copy's status. The copy sets up
// the namespace's loopback, starts the stack, runs the scenarios and stops
// the stack. Both copies get the same test flags, so -run, -v and -count
// work as usual. The harness also runs this binary as the bridge of a
// program it gives a network namespace of its own (provider-kubernetes),
// which never gets as far as the tests.
func TestMain(m *testing.M) {
	harness.MaybeRunBridge()
	if harness.InNetns() {
		os.Exit(inside(m))
	}
	os.Exit(outside(m))
}

func outside(m *testing.M) int {
	if !anyTestSelected() {
		return m.Run()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "firebolt-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	err = harness.Reexec{Prog: "e2e", Args: os.Args[1:], Work: work, WorkEnv: envWork, Stdin: os.Stdin}.Run(ctx)
	code, exited := harness.ExitCode(err)
	switch {
	case err == nil && os.Getenv(envKeep) == "":
		_ = os.RemoveAll(work)
	case err == nil:
		fmt.Fprintf(os.Stderr, "e2e: %s is set: logs, certificates and data kept in %s\n", envKeep, work)
	case exited:
		fmt.Fprintf(os.Stderr, "e2e: logs, certificates and data kept in %s\n", work)
	default:
		fmt.Fprintln(os.Stderr, "e2e:", err)
	}
	return code
}

// anyTestSelected asks this binary whether -run selects any test, so that
// `go test ./... -run SomethingElse` costs nothing here.
func anyTestSelected() bool {
	var run string
	for i, a := range os.Args[1:] {
		switch {
		case strings.HasPrefix(a, "-test.list"):
			return false
		case strings.HasPrefix(a, "-test.run="):
			run = strings.TrimPrefix(a, "-test.run=")
		case a == "-test.run" && i+2 < len(os.Args):
			run = os.Args[i+2]
		}
	}
	if run == "" {
		return true
	}
	top, _, _ := strings.Cut(run, "/")
	self, err := os.Executable()
	if err != nil {
		return true
	}
	out, err := exec.CommandContext(context.Background(), self, "-test.list="+top).Output()
	if err != nil {
		return true
	}
	return len(bytes.TrimSpace(out)) > 0
}

func inside(m *testing.M) int {
	tools, err := harness.DecodeTools(os.Getenv(harness.EnvTools))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if err := harness.SetupLoopback(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot set up the namespace's loopback:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	// The original operator is made and migrated up to step 5 while the
	// stack starts, before the Configuration is installed
	// (original_test.go); TestMigration finishes it.
	c, err := harness.Start(ctx, tools, filepath.Join(os.Getenv(envWork), "stack"), os.Stderr, harness.BeforePackages(setUpOriginal))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot start the stack:", err)
		return 1
	}
	cp = c
	// The scenarios mostly wait on the control plane, so they run at once
	// whatever the number of CPUs, unless -parallel says otherwise.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "16")
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: every process's full log is in %s\n", filepath.Join(c.Dir, "logs"))
	}
	c.Stop()
	return code
}
