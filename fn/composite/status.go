package composite

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Condition is a custom condition for the composite and its claim.
type Condition struct {
	Type    string                 `json:"type"`
	Status  metav1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason"`
	Message string                 `json:"message,omitempty"`
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

// Conditions reads the observed composite's status.conditions by type,
// which Crossplane maintains and the API types leave out. An entry that is
// not an object is skipped; of two with one type the first counts.
func Conditions(xr map[string]any) map[string]Condition {
	out := map[string]Condition{}
	cs, _, _ := unstructured.NestedSlice(xr, "status", "conditions")
	for _, c := range cs {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { v, _ := m[k].(string); return v }
		if _, seen := out[str("type")]; seen {
			continue
		}
		out[str("type")] = Condition{Type: str("type"), Status: metav1.ConditionStatus(str("status")), Reason: str("reason"), Message: str("message")}
	}
	return out
}

// ConditionOf is the observed condition of type typ; nil when absent.
func ConditionOf(xr map[string]any, typ string) *Condition {
	if c, ok := Conditions(xr)[typ]; ok {
		return &c
	}
	return nil
}
