package instance

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// userErrors are the reasons that need someone to act; becoming one of them
// is announced with a warning event.
var userErrors = map[string]bool{
	ReasonTemplateRejected:              true,
	ReasonPostgresEnsureFailed:          true,
	ReasonPostgresSecretPreflightFailed: true,
	ReasonEnsureFailed:                  true,
	ReasonLimitExceeded:                 true,
	ReasonIDChangeRefused:               true,
	ReasonTLSSpecInvalid:                true,
}

// status decides the instance's status, conditions, events, readiness and
// TTL from what is observed and what blocked each component.
//
// metadataReady and gatewayReady tell whether the service is reachable
// right now, from the observed Deployments, even while a spec change is
// blocked: the endpoint of a running service stays published so engines
// keep working. The conditions tell whether the spec is in effect, and the
// phase is Ready only when both are.
//
// rollup are further conditions the instance's readiness needs True.
func (c *computation) status(id string, metaBlock, gwBlock *blocked, internalPostgres bool, rollup ...Condition) {
	n := c.n
	metaServing := serving(c.in.Observed[RNMetadata])
	gwServing := serving(c.in.Observed[RNGateway])

	st := v1alpha1.FireboltInstanceStatus{ID: id, MetadataReady: metaServing, GatewayReady: gwServing}
	if metaServing {
		st.MetadataEndpoint = n.metadataEndpoint()
	}
	if gwServing {
		st.GatewayEndpoint = n.gatewayEndpoint()
	}

	meta := Condition{Type: TypeMetadataReady}
	switch {
	case metaBlock != nil:
		meta.Status, meta.Reason, meta.Message = metav1.ConditionFalse, metaBlock.reason, metaBlock.message
	case c.idRefused != nil:
		meta.Status, meta.Reason, meta.Message = metav1.ConditionFalse, c.idRefused.reason, c.idRefused.message
	case metaServing:
		meta.Status, meta.Reason, meta.Message = metav1.ConditionTrue, ReasonReady, "metadata service is available at "+st.MetadataEndpoint
	default:
		var waiting []string
		if internalPostgres && !statefulSetReady(c.in.Observed[RNPostgres]) {
			waiting = append(waiting, fmt.Sprintf("PostgreSQL StatefulSet %q to become ready", n.postgres()))
		}
		waiting = append(waiting, fmt.Sprintf("Deployment %q to become available", n.metadata()))
		meta.Status, meta.Reason, meta.Message = metav1.ConditionFalse, ReasonProvisioning, "waiting for "+strings.Join(waiting, " and ")
	}

	gw := Condition{Type: TypeGatewayReady}
	switch {
	case gwBlock != nil:
		gw.Status, gw.Reason, gw.Message = metav1.ConditionFalse, gwBlock.reason, gwBlock.message
	case gwServing:
		gw.Status, gw.Reason, gw.Message = metav1.ConditionTrue, ReasonReady, "gateway is available at "+st.GatewayEndpoint
	default:
		gw.Status, gw.Reason, gw.Message = metav1.ConditionFalse, ReasonProvisioning, fmt.Sprintf("waiting for Deployment %q to become available", n.gateway())
	}

	prev := c.in.XR.Status.Phase
	conds := append([]Condition{meta, gw}, rollup...)
	allTrue := true
	for _, cond := range conds {
		allTrue = allTrue && cond.Status == metav1.ConditionTrue
	}
	switch {
	case allTrue:
		st.Phase = v1alpha1.InstancePhaseReady
	case prev == v1alpha1.InstancePhaseReady || prev == v1alpha1.InstancePhaseDegraded:
		st.Phase = v1alpha1.InstancePhaseDegraded
	default:
		st.Phase = v1alpha1.InstancePhaseProvisioning
	}

	p := &c.plan
	p.Status = st
	p.Conditions = conds
	p.Ready = st.Phase == v1alpha1.InstancePhaseReady
	p.TTL = ProvisioningTTL
	if p.Ready {
		p.TTL = c.cfg.StableTTL
	}

	for _, cond := range p.Conditions {
		old, seen := c.in.Conditions[cond.Type]
		changed := !seen || old.Reason != cond.Reason || old.Status != cond.Status
		if changed && userErrors[cond.Reason] {
			p.Results = append(p.Results, Result{Severity: composite.SeverityWarning, Reason: cond.Reason, Message: cond.Message})
		}
	}
	if st.Phase != prev {
		switch st.Phase {
		case v1alpha1.InstancePhaseReady:
			p.Results = append(p.Results, Result{Severity: composite.SeverityNormal, Reason: string(st.Phase),
				Message: fmt.Sprintf("FireboltInstance is Ready: metadata service at %s, gateway at %s", st.MetadataEndpoint, st.GatewayEndpoint)})
		case v1alpha1.InstancePhaseDegraded:
			var why []string
			for _, cond := range p.Conditions {
				if cond.Status != metav1.ConditionTrue {
					why = append(why, cond.Type+": "+cond.Message)
				}
			}
			p.Results = append(p.Results, Result{Severity: composite.SeverityWarning, Reason: string(st.Phase),
				Message: "FireboltInstance is Degraded: " + strings.Join(why, "; ")})
		case v1alpha1.InstancePhaseProvisioning, v1alpha1.InstancePhaseFailed:
			// Provisioning is where every instance starts, not news. This
			// function never sets Failed: a user error is the warning on
			// its condition above.
		}
	}
}
