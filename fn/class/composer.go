// Package class composes a FireboltEngineClass. A class composes no
// workload: its composer checks the template (condition Admissible) and
// counts the engines that name it (status.boundEngines). Deletion
// protection comes from the Usage each bound engine composes (Usage).
package class

import (
	"context"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
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
type Composer struct {
	log logging.Logger
}

// New returns a Composer.
func New(log logging.Logger) *Composer { return &Composer{log: log} }

// Compose fills rsp with the class's status.
func (c *Composer) Compose(_ context.Context, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, cfg v1beta1.Resolved) error {
	in, err := read(req)
	if err != nil {
		return err
	}
	p := Compute(in, cfg)
	c.log.Debug("Composed engine class", "boundEngines", p.Status.BoundEngines, "admissible", p.Ready)
	return write(req, rsp, p)
}
