package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

// pollEvery is how often a wait looks again. The control plane reacts within
// a second or two, so faster polling only adds load to a two-core machine.
const pollEvery = 500 * time.Millisecond

// A Check looks once. It returns done when the wait is over, and always a
// short description of what it saw, which a timeout reports. A non-nil error
// ends the wait at once: something happened that waiting cannot fix.
type Check func(ctx context.Context) (done bool, seen string, err error)

// Wait polls check until it is done, ctx ends, or timeout passes. Its error
// names what it waited for and what it last saw.
func Wait(ctx context.Context, timeout time.Duration, what string, check Check) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	seen := "(nothing yet)"
	for {
		done, s, err := check(ctx)
		if s != "" {
			seen = s
		}
		if err != nil {
			return errors.Wrapf(err, "gave up waiting for %s after %s; last saw: %s", what, time.Since(start).Round(time.Millisecond), seen)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Errorf("timed out after %s waiting for %s; last saw: %s", time.Since(start).Round(time.Millisecond), what, seen)
		case <-time.After(pollEvery):
		}
	}
}

// SeenErr describes an error as something seen, for checks whose errors
// are transient (the API server not up yet, an object not created yet).
func SeenErr(err error) string { return fmt.Sprintf("error: %v", err) }
