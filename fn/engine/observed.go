package engine

import (
	"strconv"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// ObservedObject is an observed composed resource. The engine decides from
// a handful of its fields (names, generations, a StatefulSet's status
// counts, the routing selector), read where they are in the request's
// Struct: converting every observed object whole into unstructured maps
// on every call was a quarter of what a stable engine's call allocated.
// The whole object is converted only when it is returned unchanged.
type ObservedObject struct {
	// s is the request's object; m the same object as unstructured
	// content, for objects that are not read from a request. Exactly one
	// is set.
	s *structpb.Struct
	m map[string]any
}

// observedComposed is the request's observed composed resources by
// composition-resource-name, read in place.
func observedComposed(rs map[string]*fnv1.Resource) map[resource.Name]*ObservedObject {
	out := make(map[resource.Name]*ObservedObject, len(rs))
	for n, r := range rs {
		out[resource.Name(n)] = &ObservedObject{s: r.GetResource()}
	}
	return out
}

// UnstructuredContent is the whole object as unstructured content, a new
// copy on every call that the caller owns. An object the request carries
// without content is empty, as the SDK decodes it.
func (o *ObservedObject) UnstructuredContent() map[string]any {
	if o.m != nil {
		return runtime.DeepCopyJSON(o.m)
	}
	return o.s.AsMap()
}

// field is the value at path, nil when any step is absent or not an
// object.
func (o *ObservedObject) field(path ...string) (any, *structpb.Value, bool) {
	if o.m != nil {
		v, ok, err := unstructured.NestedFieldNoCopy(o.m, path...)
		return v, nil, ok && err == nil
	}
	s := o.s
	for i, p := range path {
		v, ok := s.GetFields()[p]
		if !ok {
			return nil, nil, false
		}
		if i == len(path)-1 {
			return nil, v, true
		}
		if s = v.GetStructValue(); s == nil {
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// number reads an integer field as number does for unstructured content:
// absent or non-numeric reads as 0.
func (o *ObservedObject) number(path ...string) int64 {
	v, pv, ok := o.field(path...)
	switch {
	case !ok:
		return 0
	case pv == nil:
		return numberOf(v)
	}
	switch k := pv.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return int64(k.NumberValue)
	case *structpb.Value_StringValue:
		i, _ := strconv.ParseInt(k.StringValue, 10, 64)
		return i
	}
	return 0
}

// str reads a string field as unstructured.NestedString does: ok only when
// the field is a string.
func (o *ObservedObject) str(path ...string) (string, bool) {
	v, pv, ok := o.field(path...)
	switch {
	case !ok:
		return "", false
	case pv == nil:
		s, ok := v.(string)
		return s, ok
	}
	k, ok := pv.GetKind().(*structpb.Value_StringValue)
	if !ok {
		return "", false
	}
	return k.StringValue, true
}

// GetName is metadata.name; "" when absent.
func (o *ObservedObject) GetName() string {
	s, _ := o.str("metadata", "name")
	return s
}

// GetUID is metadata.uid; "" when absent.
func (o *ObservedObject) GetUID() types.UID {
	s, _ := o.str("metadata", "uid")
	return types.UID(s)
}
