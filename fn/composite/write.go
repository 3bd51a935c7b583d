package composite

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
)

// Desired is one desired composed resource.
type Desired struct {
	Object map[string]any
	Ready  bool
	// Struct, when set, is Object in protobuf form, written as it is
	// instead of converting Object on every call: it must equal
	// structpb.NewStruct(Object). It may be shared with other responses
	// (SharedStruct), so nothing writes to it.
	Struct *structpb.Struct
}

// Response is everything a composer decided in one call; S is the type of
// the status it owns.
type Response[S any] struct {
	// Status is the composite's status as the composer owns it: a struct
	// (every top-level JSON field it declares is owned) or a map (every
	// key is). Crossplane server-side applies the desired status, so an
	// owned field left out is deleted; fields of other pipeline steps are
	// kept.
	Status S
	// Ready is the composite's readiness.
	Ready bool
	// Resources are the desired composed resources; an observed one
	// missing here is deleted by Crossplane.
	Resources map[resource.Name]Desired
	// Conditions target the composite and its claim.
	Conditions []Condition
	// Results become events on the composite and its claim.
	Results []Result
	// Requirements are what the next call needs, by requirement name.
	Requirements map[string]*fnv1.ResourceSelector
	// TTL is when Crossplane should call again.
	TTL time.Duration
	// EncodeStatus, when set, turns Status into what its JSON encoding
	// decodes to, faster than the round trip; it must give exactly that.
	EncodeStatus func(S) (map[string]any, error)
}

// Write turns a composer's decisions into the response. Desired state
// from earlier pipeline steps is kept; this step's keys win.
func Write[S any](req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, r Response[S]) error {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return errors.Wrap(err, "cannot get desired composite resource")
	}
	ours, err := encodeStatus(r)
	if err != nil {
		return errors.Wrap(err, "cannot encode composite status")
	}
	setStatus(dxr.Resource.Object, r.Status, ours)
	if rv := statusPrecondition(req, r); rv != "" {
		dxr.Resource.SetResourceVersion(rv)
	}
	dxr.Ready = readiness(r.Ready)
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return errors.Wrap(err, "cannot set desired composite resource")
	}

	dcds := make(map[resource.Name]*resource.DesiredComposed, len(r.Resources))
	for name, d := range r.Resources {
		if d.Struct != nil {
			setDesired(rsp, name, d)
			continue
		}
		u := composed.New()
		u.SetUnstructuredContent(d.Object)
		dcds[name] = &resource.DesiredComposed{Resource: u, Ready: readiness(d.Ready)}
	}
	if err := response.SetDesiredComposedResources(rsp, dcds); err != nil {
		return errors.Wrap(err, "cannot set desired composed resources")
	}

	for _, c := range r.Conditions {
		var co *response.ConditionOption
		switch c.Status {
		case metav1.ConditionTrue:
			co = response.ConditionTrue(rsp, c.Type, c.Reason)
		case metav1.ConditionFalse:
			co = response.ConditionFalse(rsp, c.Type, c.Reason)
		default:
			co = response.ConditionUnknown(rsp, c.Type, c.Reason)
		}
		co.WithMessage(BoundMessage(c.Message)).TargetCompositeAndClaim()
	}
	for _, res := range r.Results {
		var ro *response.ResultOption
		if res.Severity == SeverityWarning {
			ro = response.Warning(rsp, errors.New(BoundMessage(res.Message)))
		} else {
			ro = response.Normal(rsp, BoundMessage(res.Message))
		}
		ro.WithReason(res.Reason).TargetCompositeAndClaim()
	}

	if len(r.Requirements) > 0 {
		if rsp.GetRequirements() == nil {
			rsp.Requirements = &fnv1.Requirements{}
		}
		if rsp.GetRequirements().GetResources() == nil {
			rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
		}
		for name, sel := range r.Requirements {
			rsp.Requirements.Resources[name] = sel
		}
	}

	if rsp.GetMeta() == nil {
		rsp.Meta = &fnv1.ResponseMeta{}
	}
	rsp.Meta.Ttl = durationpb.New(r.TTL)
	return nil
}

// setDesired puts an already encoded desired resource into the response
// as response.SetDesiredComposedResources does.
func setDesired(rsp *fnv1.RunFunctionResponse, name resource.Name, d Desired) {
	if rsp.GetDesired() == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.GetDesired().GetResources() == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	ready := fnv1.Ready_READY_FALSE
	if d.Ready {
		ready = fnv1.Ready_READY_TRUE
	}
	rsp.Desired.Resources[string(name)] = &fnv1.Resource{Resource: d.Struct, Ready: ready}
}

func readiness(ready bool) resource.Ready {
	if ready {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}

// encodeStatus is the status as its JSON encoding decodes.
func encodeStatus[S any](r Response[S]) (map[string]any, error) {
	if r.EncodeStatus != nil {
		return r.EncodeStatus(r.Status)
	}
	b, err := json.Marshal(r.Status)
	if err != nil {
		return nil, err
	}
	ours := map[string]any{}
	if err := json.Unmarshal(b, &ours); err != nil {
		return nil, err
	}
	return ours, nil
}

// setStatus replaces the fields st owns in xr's status with ours (st
// encoded), leaving fields of other pipeline steps alone.
func setStatus(xr map[string]any, st any, ours map[string]any) {
	status, _ := xr["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	for _, f := range ownedFields(st) {
		delete(status, f)
	}
	for k, v := range ours {
		status[k] = v
	}
	xr["status"] = status
}

// ownedFields are the top-level status fields st declares.
func ownedFields(st any) []string {
	v := reflect.Indirect(reflect.ValueOf(st))
	switch v.Kind() {
	case reflect.Map:
		out := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			out = append(out, k.String())
		}
		return out
	case reflect.Struct:
		t := v.Type()
		out := make([]string, 0, t.NumField())
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out = append(out, name)
			}
		}
		return out
	default:
		return nil
	}
}
