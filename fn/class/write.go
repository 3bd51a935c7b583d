package class

import (
	"errors"

	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"

	xperrors "github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
)

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
	// Every call carries the whole status: Crossplane server-side applies
	// it, so a field left out would be deleted.
	if err := dxr.Resource.SetValue("status.observedGeneration", p.Status.ObservedGeneration); err != nil {
		return xperrors.Wrap(err, "cannot set status.observedGeneration")
	}
	if err := dxr.Resource.SetValue("status.boundEngines", p.Status.BoundEngines); err != nil {
		return xperrors.Wrap(err, "cannot set status.boundEngines")
	}
	// Written even when empty, so the list never outlives the last engine.
	names := make([]any, len(p.Status.BoundEngineNames))
	for i, n := range p.Status.BoundEngineNames {
		names[i] = n
	}
	if err := dxr.Resource.SetValue("status.boundEngineNames", names); err != nil {
		return xperrors.Wrap(err, "cannot set status.boundEngineNames")
	}
	dxr.Ready = resource.ReadyFalse
	if p.Ready {
		dxr.Ready = resource.ReadyTrue
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return xperrors.Wrap(err, "cannot set desired composite resource")
	}

	var co *response.ConditionOption
	if p.Condition.Status == corev1.ConditionTrue {
		co = response.ConditionTrue(rsp, p.Condition.Type, p.Condition.Reason)
	} else {
		co = response.ConditionFalse(rsp, p.Condition.Type, p.Condition.Reason)
	}
	co.WithMessage(p.Condition.Message).TargetCompositeAndClaim()
	if p.Warning != "" {
		response.Warning(rsp, errors.New(p.Warning)).WithReason(p.Condition.Reason).TargetCompositeAndClaim()
	}

	if rsp.GetRequirements() == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.GetRequirements().GetResources() == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	rsp.Requirements.Resources[ReqEngines] = p.Requirement
	rsp.Requirements.Resources[claimgen.Requirement] = p.Claim

	if rsp.GetMeta() == nil {
		rsp.Meta = &fnv1.ResponseMeta{}
	}
	rsp.Meta.Ttl = durationpb.New(p.TTL)
	return nil
}
