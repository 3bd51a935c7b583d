package instance

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TypeEngineRegistration reports spec.metadata.engineRegistration, which is
// accepted and stored but has no effect yet.
const TypeEngineRegistration = "EngineRegistration"

// Reasons of the EngineRegistration condition.
const (
	ReasonNotImplemented = "NotImplemented"
	ReasonDisabled       = "Disabled"
)

// engineRegistration is the EngineRegistration condition, or nil when there
// is nothing to say. The original declares the field and never acts on it,
// so its manifests set it; it is accepted, and a true value is reported
// rather than silently ignored. Once reported the condition stays, turned
// to Disabled, because Crossplane keeps a condition a function stops
// sending.
func engineRegistration(enabled bool, prev map[string]Condition) *Condition {
	c := &Condition{Type: TypeEngineRegistration, Status: metav1.ConditionFalse}
	switch _, seen := prev[TypeEngineRegistration]; {
	case enabled:
		c.Reason = ReasonNotImplemented
		c.Message = "spec.metadata.engineRegistration is true but has no effect yet: engines are not registered in the metadata service (neither does the original operator, which declares the field and never acts on it)"
	case seen:
		c.Reason = ReasonDisabled
		c.Message = "spec.metadata.engineRegistration is false"
	default:
		return nil
	}
	return c
}
