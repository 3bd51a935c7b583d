package engine

import (
	"encoding/json"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Write turns a Plan into the response (composite.Write): desired composite
// status and readiness, desired composed resources and their readiness,
// conditions, results, requirements and TTL.
func Write(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p Plan) error {
	var reqs map[string]*fnv1.ResourceSelector
	if len(p.Requirements) > 0 {
		reqs = make(map[string]*fnv1.ResourceSelector, len(p.Requirements))
		for name, r := range p.Requirements {
			reqs[name] = &fnv1.ResourceSelector{
				ApiVersion: r.APIVersion,
				Kind:       r.Kind,
				Match:      &fnv1.ResourceSelector_MatchName{MatchName: r.Name},
				Namespace:  &r.Namespace,
			}
		}
	}
	return composite.Write(req, rsp, composite.Response[v1alpha1.FireboltEngineStatus]{
		Status:       p.Status,
		Ready:        p.Ready,
		Resources:    p.Resources,
		Conditions:   p.Conditions,
		Results:      p.Results,
		Requirements: reqs,
		TTL:          p.TTL,
		EncodeStatus: statusMap,
	})
}

// toMap is v as the JSON round trip decodes it, through a reused buffer.
func toMap(v any) (map[string]any, error) {
	b, done, err := marshalScratch(v)
	if err != nil {
		return nil, err
	}
	defer done()
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
