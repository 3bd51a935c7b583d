package engine

import (
	"time"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// A Plan is everything one call decides, ready to be written into the
// response: Compute's only output.
type Plan struct {
	// Status is the composite's complete next status. Crossplane applies
	// the desired composite status with server-side apply, so a field left
	// out would be deleted.
	Status v1alpha1.FireboltEngineStatus

	// Resources are the desired composed resources by
	// composition-resource-name. An observed resource missing here is
	// deleted by Crossplane.
	Resources map[resource.Name]DesiredObject

	// Ready is the composite's readiness: EngineReady is True.
	Ready bool

	Conditions []Condition

	// Results become events; only transitions produce them.
	Results []Result

	// TTL is when Crossplane should call again.
	TTL time.Duration

	// Requirements are the resources the next call needs, by name.
	Requirements map[string]Requirement
}

// The shapes every composer shares.
type (
	// DesiredObject is one desired composed resource.
	DesiredObject = composite.Desired
	// Condition is a custom condition for the composite and its claim.
	Condition = composite.Condition
	// Severity of a Result.
	Severity = composite.Severity
	// Result is an event on the composite and its claim.
	Result = composite.Result
)

// Result severities.
const (
	SeverityNormal  = composite.SeverityNormal
	SeverityWarning = composite.SeverityWarning
)

// Requirement asks Crossplane for one object by name.
type Requirement struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
}
