// Package instance composes a FireboltInstance: the internal PostgreSQL (or
// a check of the external one's credentials), the metadata service and the
// Envoy gateway, and the instance's status.
//
// It has the three layers every composer has: read decodes the request into
// Inputs (the only place that draws randomness: a candidate password),
// Compute turns Inputs into a Plan without any I/O, and write turns the Plan
// into the response.
package instance

import (
	"context"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
)

// Composer composes XFireboltInstance composites.
type Composer struct {
	log       logging.Logger
	passwords PasswordGenerator
}

// An Option configures a Composer.
type Option func(*Composer)

// WithPasswordGenerator replaces crypto/rand as the source of the internal
// PostgreSQL password; tests use it to be deterministic.
func WithPasswordGenerator(g PasswordGenerator) Option {
	return func(c *Composer) { c.passwords = g }
}

// New returns a Composer.
func New(log logging.Logger, opts ...Option) *Composer {
	c := &Composer{log: log, passwords: RandomPasswords{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Compose fills rsp with the instance's desired state. It never logs
// request content: the request carries Secret data.
func (c *Composer) Compose(_ context.Context, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, cfg v1beta1.Resolved) error {
	in, err := read(req, c.passwords)
	if err != nil {
		return err
	}
	plan, err := Compute(in, cfg)
	if err != nil {
		return err
	}
	c.log.Debug("Composed instance", "phase", plan.Status.Phase, "resources", len(plan.Resources))
	return write(req, rsp, plan)
}
