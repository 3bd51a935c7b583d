// Package class composes a FireboltEngineClass. A class composes no
// workload: its composer checks the template (condition Admissible),
// publishes its spec to its engines in a ConfigMap (SpecConfigMap) and
// counts the engines bound to it (status.boundEngines) by the binding
// ConfigMaps they compose (engine.Binding). While any is bound it composes
// a Usage of its own claim, which is its deletion protection (InUse).
package class

import (
	"context"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Condition the composer publishes on the composite and the claim. The
// original called it Ready, which Crossplane reserves.
const (
	TypeAdmissible = "Admissible"

	ReasonAdmissible            = "Admissible"
	ReasonOperatorOwnedFieldSet = "OperatorOwnedFieldSet"
	// ReasonSpecNotPublished: the spec is longer than the ConfigMap that
	// publishes it to the engines can hold.
	ReasonSpecNotPublished = "SpecNotPublished"
)

// ReqBindings is the requirement name under which Crossplane sends the
// engines' bindings to the class.
const ReqBindings = "bindings"

// Composer composes XFireboltEngineClass composites.
type Composer struct {
	now func() time.Time
}

// An Option configures a Composer.
type Option func(*Composer)

// WithClock replaces the wall clock, for tests.
func WithClock(now func() time.Time) Option {
	return func(c *Composer) { c.now = now }
}

// New returns a Composer.
func New(o ...Option) *Composer {
	c := &Composer{now: time.Now}
	for _, fn := range o {
		fn(c)
	}
	return c
}

// Compose fills rsp with the class's status.
func (c *Composer) Compose(_ context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	in, err := read(call)
	if err != nil {
		return err
	}
	p := Compute(in, call.Config, c.now())
	call.Log.Debug("Composed engine class", "boundEngines", p.Status.BoundEngines, "admissible", p.Ready)
	return write(call.Req, rsp, p)
}
