package phasedsts

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// write turns a plan into the response (composite.Write). A plan that
// still needs its check (the Secret is not fetched yet) holds: the
// StatefulSet is returned as observed and the status as it was, and
// Crossplane calls again with what the requirements ask for.
func write(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p Plan) error {
	return composite.Write(req, rsp, composite.Response[Status]{
		Status:       p.Status,
		Ready:        p.Ready,
		Resources:    p.Resources,
		Conditions:   []composite.Condition{p.Condition},
		Results:      p.Results,
		Requirements: p.Require,
		TTL:          p.TTL,
	})
}
