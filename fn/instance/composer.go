// Package instance composes a FireboltInstance: the internal PostgreSQL (or
// a check of the external one's credentials), the metadata service and the
// Envoy gateway, and the instance's status.
//
// It has the three layers every composer has: read decodes the request into
// Inputs (the only place that draws randomness: a candidate password),
// Compute turns Inputs into a Plan without any I/O, and composite.Write
// turns the Plan into the response.
package instance

import (
	"context"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Composer composes XFireboltInstance composites.
type Composer struct {
	passwords PasswordGenerator
	now       func() time.Time
}

// An Option configures a Composer.
type Option func(*Composer)

// WithPasswordGenerator replaces crypto/rand as the source of the internal
// PostgreSQL password; tests use it to be deterministic.
func WithPasswordGenerator(g PasswordGenerator) Option {
	return func(c *Composer) { c.passwords = g }
}

// WithClock replaces the wall clock (signing-key rotation's timers), for
// tests.
func WithClock(now func() time.Time) Option {
	return func(c *Composer) { c.now = now }
}

// New returns a Composer.
func New(opts ...Option) *Composer {
	c := &Composer{passwords: RandomPasswords{}, now: time.Now}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Compose fills rsp with the instance's desired state. It never logs
// request content: the request carries Secret data.
func (c *Composer) Compose(_ context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	in, err := read(call, c.passwords)
	if err != nil {
		return err
	}
	in.Now = c.now()
	plan, err := Compute(in, call.Config)
	if err != nil {
		return err
	}
	call.Log.Debug("Composed instance", "phase", plan.Status.Phase, "resources", len(plan.Resources))
	return composite.Write(call.Req, rsp, plan)
}
