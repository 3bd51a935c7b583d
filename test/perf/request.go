// Package perf measures the function against a no-op function-sdk-go
// function (the floor) over gRPC on loopback, with the same request: see
// cmd/perf, run by `make perf`.
package perf

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// annotationResourceName is where Crossplane keeps an observed composed
// resource's composition-resource-name.
const annotationResourceName = "crossplane.io/composition-resource-name"

// maxRequirementRounds bounds the requirement iterations, as Crossplane
// bounds its own.
const maxRequirementRounds = 5

// A Caller runs the function once.
type Caller func(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error)

// Example is a render example directory: xr.yaml (the observed composite),
// observed.yaml (observed composed resources) and required.yaml (what
// Crossplane may fetch when the function asks), as `crossplane render`
// reads them.
type Example struct {
	XR       map[string]any
	Observed []map[string]any
	Required []map[string]any
}

// LoadExample reads an example directory; observed.yaml and required.yaml
// are optional.
func LoadExample(dir string) (Example, error) {
	var ex Example
	xrs, err := readObjects(filepath.Join(dir, "xr.yaml"))
	if err != nil {
		return Example{}, err
	}
	if len(xrs) != 1 {
		return Example{}, errors.Errorf("%s: want one composite, got %d", filepath.Join(dir, "xr.yaml"), len(xrs))
	}
	ex.XR = xrs[0]
	for name, into := range map[string]*[]map[string]any{"observed.yaml": &ex.Observed, "required.yaml": &ex.Required} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); os.IsNotExist(err) {
			continue
		}
		if *into, err = readObjects(p); err != nil {
			return Example{}, err
		}
	}
	return ex, nil
}

func readObjects(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read %s", path)
	}
	d := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []map[string]any
	for range 1000 {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, errors.Wrapf(err, "cannot parse %s", path)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return nil, errors.Errorf("%s: more than 1000 documents", path)
}

// Request builds the request Crossplane sends for ex once the function's
// requirements are resolved: it calls the function, answers what it
// requires from ex.Required (by apiVersion, kind, name and namespace) and
// calls again, until the requirements stop changing.
func (ex Example) Request(ctx context.Context, call Caller) (*fnv1.RunFunctionRequest, error) {
	xr, err := structpb.NewStruct(ex.XR)
	if err != nil {
		return nil, errors.Wrap(err, "cannot encode the composite")
	}
	input, _ := structpb.NewStruct(map[string]any{"apiVersion": "firebolt.fn.crossplane.io/v1beta1", "kind": "Input"})
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "perf"},
		Input:    input,
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}, Resources: map[string]*fnv1.Resource{}},
	}
	for _, o := range ex.Observed {
		u := unstructured.Unstructured{Object: o}
		name := u.GetAnnotations()[annotationResourceName]
		if name == "" {
			return nil, errors.Errorf("observed %s %s has no %s annotation", u.GetKind(), u.GetName(), annotationResourceName)
		}
		s, err := structpb.NewStruct(o)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot encode observed %s", name)
		}
		req.Observed.Resources[name] = &fnv1.Resource{Resource: s}
	}
	var asked *fnv1.Requirements
	for range maxRequirementRounds {
		rsp, err := call(ctx, req)
		if err != nil {
			return nil, err
		}
		if proto.Equal(rsp.GetRequirements(), asked) {
			return req, nil
		}
		asked = rsp.GetRequirements()
		req.RequiredResources = ex.resolve(asked)
	}
	return nil, errors.Errorf("requirements still changing after %d calls", maxRequirementRounds)
}

func (ex Example) resolve(r *fnv1.Requirements) map[string]*fnv1.Resources {
	if len(r.GetResources()) == 0 {
		return nil
	}
	out := map[string]*fnv1.Resources{}
	for name, sel := range r.GetResources() {
		res := &fnv1.Resources{}
		for _, o := range ex.Required {
			u := unstructured.Unstructured{Object: o}
			if u.GetAPIVersion() != sel.GetApiVersion() || u.GetKind() != sel.GetKind() ||
				u.GetName() != sel.GetMatchName() || u.GetNamespace() != sel.GetNamespace() {
				continue
			}
			if s, err := structpb.NewStruct(o); err == nil {
				res.Items = append(res.Items, &fnv1.Resource{Resource: s})
			}
		}
		out[name] = res
	}
	return out
}
