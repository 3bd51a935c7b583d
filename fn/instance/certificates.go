package instance

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// certificate is a cert-manager Certificate of this instance, as the
// original makes them: its Secret of the same name, both labelled with the
// instance and component, issued by cm's issuer for cm's duration (def when
// unset or not positive) and renewed cm's renewBefore early (defRenew
// likewise), left to cert-manager's own default when that is not shorter
// than the duration. spec holds what differs between certificates: names,
// usages, the private key.
func (c *computation) certificate(name, component string, cm v1alpha1.CertManagerSpec, def, defRenew time.Duration, spec map[string]any) *unstructured.Unstructured {
	labels := map[string]any{LabelInstance: c.n.instance, LabelComponent: component}
	duration, renew := def, defRenew
	if cm.Duration != nil && cm.Duration.Duration > 0 {
		duration = cm.Duration.Duration
	}
	if cm.RenewBefore != nil && cm.RenewBefore.Duration > 0 {
		renew = cm.RenewBefore.Duration
	}
	kind := cm.IssuerRef.Kind
	if kind == "" {
		kind = "ClusterIssuer"
	}
	spec["secretName"] = name
	spec["duration"] = duration.String()
	spec["issuerRef"] = map[string]any{"name": cm.IssuerRef.Name, "kind": kind, "group": "cert-manager.io"}
	spec["secretTemplate"] = map[string]any{"labels": labels}
	if renew < duration {
		spec["renewBefore"] = renew.String()
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Certificate",
		"metadata":   map[string]any{"name": name, "namespace": c.n.namespace, "labels": labels},
		"spec":       spec,
	}}
}
