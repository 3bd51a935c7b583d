package instance

import (
	"encoding/json"
	"errors"

	"google.golang.org/protobuf/types/known/durationpb"

	xperrors "github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
)

// statusFields are the status fields the composer owns. Crossplane
// server-side applies the desired status, so a field left out is deleted:
// each is set or deliberately absent on every call.
var statusFields = []string{"observedGeneration", "composedGeneration", "phase", "id", "metadataReady", "metadataEndpoint", "gatewayReady", "gatewayEndpoint"}

// write turns a plan into the response.
func write(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p Plan) error {
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return xperrors.Wrap(err, "cannot get observed composite resource")
	}
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return xperrors.Wrap(err, "cannot get desired composite resource")
	}
	dxr.Resource.SetAPIVersion(oxr.Resource.GetAPIVersion())
	dxr.Resource.SetKind(oxr.Resource.GetKind())
	if err := setStatus(dxr.Resource.Object, p.Status); err != nil {
		return err
	}
	dxr.Ready = resource.ReadyFalse
	if p.Ready {
		dxr.Ready = resource.ReadyTrue
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return xperrors.Wrap(err, "cannot set desired composite resource")
	}

	dcds := make(map[resource.Name]*resource.DesiredComposed, len(p.Resources))
	for rn, d := range p.Resources {
		dcd := &resource.DesiredComposed{Resource: d.Object, Ready: resource.ReadyFalse}
		if d.Ready {
			dcd.Ready = resource.ReadyTrue
		}
		dcds[rn] = dcd
	}
	if err := response.SetDesiredComposedResources(rsp, dcds); err != nil {
		return xperrors.Wrap(err, "cannot set desired composed resources")
	}

	for _, c := range p.Conditions {
		var o *response.ConditionOption
		switch c.Status {
		case "True":
			o = response.ConditionTrue(rsp, c.Type, c.Reason)
		case "False":
			o = response.ConditionFalse(rsp, c.Type, c.Reason)
		default:
			o = response.ConditionUnknown(rsp, c.Type, c.Reason)
		}
		o.WithMessage(c.Message).TargetCompositeAndClaim()
	}
	for _, r := range p.Results {
		var o *response.ResultOption
		switch r.Severity {
		case fnv1.Severity_SEVERITY_WARNING:
			o = response.Warning(rsp, errors.New(r.Message))
		default:
			o = response.Normal(rsp, r.Message)
		}
		o.WithReason(r.Reason).TargetCompositeAndClaim()
	}

	if len(p.Requirements) > 0 {
		if rsp.GetRequirements() == nil {
			rsp.Requirements = &fnv1.Requirements{}
		}
		if rsp.GetRequirements().GetResources() == nil {
			rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
		}
		for name, sel := range p.Requirements {
			rsp.Requirements.Resources[name] = sel
		}
	}

	if rsp.GetMeta() == nil {
		rsp.Meta = &fnv1.ResponseMeta{}
	}
	rsp.Meta.Ttl = durationpb.New(p.TTL)
	return nil
}

// setStatus writes the composer's status fields into a composite's content,
// leaving fields of other pipeline steps alone.
func setStatus(xr map[string]any, st any) error {
	b, err := json.Marshal(st)
	if err != nil {
		return xperrors.Wrap(err, "cannot encode status")
	}
	ours := map[string]any{}
	if err := json.Unmarshal(b, &ours); err != nil {
		return xperrors.Wrap(err, "cannot decode status")
	}
	status, _ := xr["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	for _, f := range statusFields {
		delete(status, f)
	}
	for k, v := range ours {
		status[k] = v
	}
	xr["status"] = status
	return nil
}
