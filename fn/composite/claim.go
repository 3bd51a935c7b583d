package composite

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/resource"
)

// Labels Crossplane puts on a composite that has a claim.
const (
	LabelClaimName      = "crossplane.io/claim-name"
	LabelClaimNamespace = "crossplane.io/claim-namespace"
)

// ReasonClaimLabelsMissing is the reason of the condition every composer
// sets on a composite without claim labels.
const ReasonClaimLabelsMissing = "ClaimLabelsMissing"

// Claim is the claim a composite was created for: every composer names
// its objects after it and places them in its namespace.
type Claim struct {
	Name      string
	Namespace string
}

// ClaimOf reads the composite's claim labels.
func ClaimOf(xr *resource.Composite) Claim {
	l := xr.Resource.GetLabels()
	return Claim{Name: l[LabelClaimName], Namespace: l[LabelClaimNamespace]}
}

// Known tells whether both claim labels are set. Without them a composer
// can neither name nor place anything: it keeps what exists unchanged
// (KeepObserved) and says why with ClaimLabelsMissing, never a Fatal
// result, so one composite applied by hand cannot fail the pipeline.
func (c Claim) Known() bool { return c.Name != "" && c.Namespace != "" }

// ClaimLabelsMissing is the condition of type typ for composite xr without
// claim labels; kinds is what the claim kind creates, e.g. "engines".
func ClaimLabelsMissing(typ, xr, kinds, claimKind string) Condition {
	return Condition{
		Type: typ, Status: metav1.ConditionFalse, Reason: ReasonClaimLabelsMissing,
		Message: fmt.Sprintf("composite %s has no %s and %s labels: create %s through a %s claim", xr, LabelClaimName, LabelClaimNamespace, kinds, claimKind),
	}
}
