// Package class composes a FireboltEngineClass. A class composes no
// workload: its composer checks the template (condition Admissible) and
// counts the engines that name it (status.boundEngines). Deletion
// protection comes from the Usage each bound engine composes (engine.Usage).
package class

import (
	"context"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Condition the composer publishes on the composite and the claim. The
// original called it Ready, which Crossplane reserves.
const (
	TypeAdmissible = "Admissible"

	ReasonAdmissible            = "Admissible"
	ReasonOperatorOwnedFieldSet = "OperatorOwnedFieldSet"
)

// ReqEngines is the requirement name under which Crossplane sends the
// namespace's FireboltEngine claims.
const ReqEngines = "engines"

// Composer composes XFireboltEngineClass composites.
type Composer struct{}

// New returns a Composer.
func New() *Composer { return &Composer{} }

// Compose fills rsp with the class's status.
func (c *Composer) Compose(_ context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	in, err := read(call)
	if err != nil {
		return err
	}
	p := Compute(in, call.Config)
	call.Log.Debug("Composed engine class", "boundEngines", p.Status.BoundEngines, "admissible", p.Ready)
	return write(call.Req, rsp, p)
}
