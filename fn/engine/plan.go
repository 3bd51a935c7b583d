package engine

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
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

// DesiredObject is one desired composed resource.
type DesiredObject struct {
	Object map[string]any
	Ready  bool
}

// Condition is a custom condition for the composite and its claim.
type Condition struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// Severity of a Result.
type Severity string

// Result severities.
const (
	SeverityNormal  Severity = "Normal"
	SeverityWarning Severity = "Warning"
)

// Result is an event on the composite and its claim.
type Result struct {
	Severity Severity
	Reason   string
	Message  string
}

// Requirement asks Crossplane for one object by name.
type Requirement struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
}
