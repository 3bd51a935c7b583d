package class

import (
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// write turns a plan into the response (composite.Write).
func write(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p Plan) error {
	// Written even when empty, so the list never outlives the last engine.
	names := make([]any, len(p.Status.BoundEngineNames))
	for i, n := range p.Status.BoundEngineNames {
		names[i] = n
	}
	status := map[string]any{
		"observedGeneration": p.Status.ObservedGeneration,
		"boundEngines":       p.Status.BoundEngines,
		"boundEngineNames":   names,
	}
	if t := p.Status.LastReconciled; t != nil {
		status["lastReconciled"] = t.UTC().Format(time.RFC3339)
	}
	r := composite.Response[map[string]any]{
		Status:     status,
		Ready:      p.Ready,
		Conditions: []composite.Condition{p.Condition},
		TTL:        p.TTL,
	}
	if p.Warning != "" {
		r.Results = []composite.Result{{Severity: composite.SeverityWarning, Reason: p.Condition.Reason, Message: p.Warning}}
	}
	if p.Requirement != nil {
		r.Requirements = map[string]*fnv1.ResourceSelector{ReqBindings: p.Requirement, claimgen.Requirement: p.Claim}
	}
	if len(p.Keep) > 0 {
		r.Resources = p.Keep
	}
	if p.Publish != nil {
		cm := SpecConfigMap(p.Publish.Namespace, p.Publish.Class, p.Publish.Spec)
		r.Resources = map[resource.Name]composite.Desired{SpecResourceName: {Object: cm, Ready: p.Publish.Ready}}
		if p.InUse {
			r.Resources[InUseResourceName] = composite.Desired{Object: InUse(p.Publish.Namespace, p.Publish.Class), Ready: p.InUseReady}
		}
	}
	return composite.Write(req, rsp, r)
}
