package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

// reexecStopGrace bounds how long the copy in the namespace gets to stop its
// stack after SIGTERM before it is killed.
const reexecStopGrace = 2 * time.Minute

// A Reexec runs a program in two copies: the first (outside) builds what is
// missing while it can still reach the module proxy, then runs this same
// executable again in a new network namespace, which starts the stack and
// does the work. The end-to-end tests and `make scale` both run this way.
type Reexec struct {
	// Prog names the program in messages ("e2e", "scale").
	Prog string
	// Args are the copy's arguments.
	Args []string
	// Work is the work directory; the tools are built under Work/build.
	Work string
	// WorkEnv is the environment variable that carries Work to the copy.
	WorkEnv string
	// Stdin is the copy's standard input (nil: none).
	Stdin io.Reader
}

// ErrNoNetns wraps the failure to start the copy in a new network namespace.
var ErrNoNetns = errors.New("cannot start in a new network namespace (as root this needs CAP_SYS_ADMIN; " +
	"otherwise unprivileged user namespaces must be enabled)")

// Run builds what is missing, starts the copy and waits for it. When ctx
// ends first the copy gets SIGTERM, which stops its stack, and reexecStopGrace to
// exit before it is killed. The copy's own failure is an *exec.ExitError
// (see ExitCode).
func (r Reexec) Run(ctx context.Context) error {
	start := time.Now()
	tools, err := Prepare(ctx, filepath.Join(r.Work, "build"), os.Stderr)
	if err != nil {
		return errors.Wrapf(err, "cannot build what %s runs", r.Prog)
	}
	fmt.Fprintf(os.Stderr, "%s: tools and packages ready in %s\n", r.Prog, time.Since(start).Round(time.Second))
	cmd := NetnsCommand(r.Args, EnvTools+"="+tools.Encode(), r.WorkEnv+"="+r.Work)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return errors.Errorf("%w: %w", ErrNoNetns, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintf(os.Stderr, "%s: interrupted; stopping the control plane\n", r.Prog)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err = <-done:
	case <-time.After(reexecStopGrace):
		_ = cmd.Process.Kill()
		err = <-done
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// ExitCode is the exit status a Reexec's error stands for: the copy's own
// when it exited with one, else 1 (0 for no error). ok is false when the
// error is not the copy's exit status, so it still needs reporting.
func ExitCode(err error) (code int, ok bool) {
	if err == nil {
		return 0, true
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() > 0 {
		return exit.ExitCode(), true
	}
	return 1, false
}
