// Package composite is what every composer does with Crossplane the same
// way: who the claim is, decoding the observed composite and what
// Crossplane fetched, the conditions and results a composer decides, and the
// write tail that turns those decisions into the response. A composer holds
// only its product logic between Read and Write.
package composite

import (
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
)

// Call is one RunFunction call as a composer receives it: the dispatcher has
// decoded the function input and the observed composite once.
type Call struct {
	Req *fnv1.RunFunctionRequest
	// XR is the observed composite.
	XR *resource.Composite
	// Log carries the call's tag and the composite's kind and name.
	Log    logging.Logger
	Config v1beta1.Resolved
}
