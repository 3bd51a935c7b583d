package instance

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/certmanager"
)

// certificate is a cert-manager Certificate of this instance, as the
// original makes them: its Secret of the same name, both labelled with the
// instance and component, issued by cm's issuer for cm's duration (def when
// unset or not positive) and renewed cm's renewBefore early (defRenew
// likewise). spec holds what differs between certificates: names, usages,
// the private key.
func (c *computation) certificate(name, component string, cm v1alpha1.CertManagerSpec, def, defRenew time.Duration, spec map[string]any) *unstructured.Unstructured {
	return certmanager.Certificate(certmanager.Spec{
		Name: name, Namespace: c.n.namespace,
		Labels: map[string]string{LabelInstance: c.n.instance, LabelComponent: component},
		Issuer: cm, Duration: def, RenewBefore: defRenew, Extra: spec,
	})
}

// certificateReady: the observed Certificate is issued for its current
// generation.
func certificateReady(o *composed.Unstructured) bool {
	return o != nil && certmanager.Ready(o.Object)
}
