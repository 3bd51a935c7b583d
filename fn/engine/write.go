package engine

import (
	"encoding/json"

	"google.golang.org/protobuf/types/known/durationpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
)

// Write turns a Plan into the response: desired composite status and
// readiness, desired composed resources and their readiness, conditions,
// results, requirements and TTL. Desired state from earlier pipeline steps
// is kept; this step's keys win.
func Write(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p Plan) error {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot get desired composite resource")
	}
	status, err := statusMap(p.Status)
	if err != nil {
		return errors.Wrap(err, "cannot encode composite status")
	}
	current, _ := dxr.Resource.Object["status"].(map[string]any)
	if current == nil {
		current = map[string]any{}
	}
	for k, v := range status {
		current[k] = v
	}
	dxr.Resource.Object["status"] = current
	dxr.Ready = resource.ReadyFalse
	if p.Ready {
		dxr.Ready = resource.ReadyTrue
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return errors.Wrap(err, "cannot set desired composite resource")
	}

	dcds := make(map[resource.Name]*resource.DesiredComposed, len(p.Resources))
	for name, o := range p.Resources {
		d := &resource.DesiredComposed{Resource: &composed.Unstructured{}, Ready: resource.ReadyFalse}
		d.Resource.SetUnstructuredContent(o.Object)
		if o.Ready {
			d.Ready = resource.ReadyTrue
		}
		dcds[name] = d
	}
	if err := response.SetDesiredComposedResources(rsp, dcds); err != nil {
		return errors.Wrap(err, "cannot set desired composed resources")
	}

	for _, c := range p.Conditions {
		var co *response.ConditionOption
		switch c.Status {
		case metav1.ConditionTrue:
			co = response.ConditionTrue(rsp, c.Type, c.Reason)
		case metav1.ConditionFalse:
			co = response.ConditionFalse(rsp, c.Type, c.Reason)
		default:
			co = response.ConditionUnknown(rsp, c.Type, c.Reason)
		}
		co.WithMessage(c.Message).TargetCompositeAndClaim()
	}

	for _, r := range p.Results {
		var ro *response.ResultOption
		if r.Severity == SeverityWarning {
			ro = response.Warning(rsp, errors.New(r.Message))
		} else {
			ro = response.Normal(rsp, r.Message)
		}
		ro.WithReason(r.Reason).TargetCompositeAndClaim()
	}

	if len(p.Requirements) > 0 {
		if rsp.Requirements == nil {
			rsp.Requirements = &fnv1.Requirements{}
		}
		if rsp.Requirements.Resources == nil {
			rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
		}
		for name, r := range p.Requirements {
			rsp.Requirements.Resources[name] = &fnv1.ResourceSelector{
				ApiVersion: r.APIVersion,
				Kind:       r.Kind,
				Match:      &fnv1.ResourceSelector_MatchName{MatchName: r.Name},
				Namespace:  &r.Namespace,
			}
		}
	}

	if rsp.Meta == nil {
		rsp.Meta = &fnv1.ResponseMeta{}
	}
	rsp.Meta.Ttl = durationpb.New(p.TTL)
	return nil
}

func toMap(v any) (map[string]any, error) {
	b, done, err := marshalScratch(v)
	if err != nil {
		return nil, err
	}
	defer done()
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
