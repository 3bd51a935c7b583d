// Command kubectl-firebolt is the `kubectl firebolt` plugin
// (internal/kubectlfirebolt): kubectl runs it for `kubectl firebolt …`
// once it is on PATH.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/firebolt-db/firebolt-crossplane/internal/kubectlfirebolt"
)

func main() {
	// An interrupt ends a wait or a port-forward as a normal end would.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kubectlfirebolt.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, kubectlfirebolt.NewClients)
	stop()
	os.Exit(code)
}
