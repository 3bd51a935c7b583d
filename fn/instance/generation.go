package instance

import (
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
)

// generations decides the claim generations the status records, once
// status has decided readiness.
//
// composedGeneration is the claim generation every object of this response
// is rendered from. Crossplane applies the composed objects before it
// writes the status, so once the status holds it, the objects a later call
// observes are that generation's. observedGeneration is published only
// then, and only when every one of those objects is ready (Deployments and
// the StatefulSet rolled out) and the instance is Ready: a claim edit is
// not reported in effect on the call that first renders it, when what is
// observed is still the previous spec's.
func (c *computation) generations(allRendered bool) {
	claim, prev := c.in.ClaimGen, c.in.XR.Status
	st := &c.plan.Status

	st.ComposedGeneration = prev.ComposedGeneration
	if allRendered && claim.Found && claim.SpecMatches && !c.holdComposed {
		st.ComposedGeneration = claim.Generation
	}

	inEffect := allRendered && c.plan.Ready && prev.ComposedGeneration == claim.Generation
	for _, d := range c.plan.Resources {
		inEffect = inEffect && d.Ready
	}
	st.ObservedGeneration = claimgen.Observed(prev.ObservedGeneration, claim, inEffect)
}
