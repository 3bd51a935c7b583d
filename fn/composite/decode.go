package composite

import (
	"encoding/json"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// Decode decodes unstructured content into typed values through JSON,
// which also turns the float64 numbers of a protobuf Struct into integers,
// and ignores fields the type does not know (Crossplane's own spec fields,
// conditions).
func Decode(m map[string]any, into ...any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	for _, v := range into {
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
	}
	return nil
}

// DecodeField decodes obj[key] into out as Decode does; an absent key
// leaves out as it is.
func DecodeField(obj map[string]any, key string, out any) error {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil
	}
	return decodeWith(func(b []byte) ([]byte, bool) { return AppendJSON(b, v) }, func() any { return v }, out)
}

// DecodeStructValue decodes v into out as DecodeField decodes
// v.AsInterface(), without converting v first; absent or null leaves out
// as it is.
func DecodeStructValue(v *structpb.Value, out any) error {
	if v.GetKind() == nil {
		return nil
	}
	if _, null := v.GetKind().(*structpb.Value_NullValue); null {
		return nil
	}
	return decodeWith(func(b []byte) ([]byte, bool) { return AppendStructJSON(b, v) }, v.AsInterface, out)
}

// maxScratchBytes bounds the buffers kept for reuse: a rare huge document
// is encoded into a buffer that is then dropped, not pinned.
const maxScratchBytes = 256 << 10

var scratch = sync.Pool{New: func() any { return new([]byte) }}

// decodeWith decodes into out what encode writes, through a reused
// buffer; when encode declines, value() goes through json.Marshal, which
// fails or succeeds as it always did.
func decodeWith(encode func([]byte) ([]byte, bool), value func() any, out any) error {
	bp := scratch.Get().(*[]byte)
	buf, ok := encode((*bp)[:0])
	if cap(buf) <= maxScratchBytes {
		// Unmarshal keeps nothing of its input.
		defer func() { *bp = buf[:0]; scratch.Put(bp) }()
	}
	if ok {
		return json.Unmarshal(buf, out)
	}
	b, err := json.Marshal(value())
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// ObservedComposed is the observed composed resources by
// composition-resource-name.
func ObservedComposed(req *fnv1.RunFunctionRequest) (map[resource.Name]*composed.Unstructured, error) {
	ocds, err := request.GetObservedComposedResources(req)
	if err != nil {
		return nil, errors.Wrap(err, "cannot get observed composed resources")
	}
	out := make(map[resource.Name]*composed.Unstructured, len(ocds))
	for n, o := range ocds {
		out[n] = o.Resource
	}
	return out, nil
}

// Required is what Crossplane fetched for the requirement name; resolved
// is false until it has tried. what names the resource in the error.
func Required(req *fnv1.RunFunctionRequest, name, what string) ([]resource.Required, bool, error) {
	items, resolved, err := request.GetRequiredResource(req, name)
	if err != nil {
		return nil, false, errors.Wrapf(err, "cannot get required %s", what)
	}
	return items, resolved, nil
}

// RequiredNamed is the object called name among what Crossplane fetched
// for the requirement reqName (nil when it found none); resolved is false
// until it has tried. what names the resource in the error. Names are
// read where they are in the request, so only the object picked is
// converted to unstructured content, as Named picks it.
func RequiredNamed(req *fnv1.RunFunctionRequest, reqName, what, name string) (*unstructured.Unstructured, bool, error) {
	rrs, resolved := req.GetRequiredResources()[reqName]
	for _, it := range rrs.GetItems() {
		// GetName's reading: a name that is not a string is "".
		if it.GetResource().GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue() != name {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := resource.AsObject(it.GetResource(), u); err != nil {
			return nil, false, errors.Wrapf(err, "cannot get required %s", what)
		}
		return u, resolved, nil
	}
	return nil, resolved, nil
}

// Named picks the required object called name. Crossplane matches by
// name, but a requirement from an earlier call (the reference changed in
// between) may still be what the request carries.
func Named(items []resource.Required, name string) *unstructured.Unstructured {
	for _, it := range items {
		if it.Resource != nil && it.Resource.GetName() == name {
			return it.Resource
		}
	}
	return nil
}
