package composite

import "google.golang.org/protobuf/types/known/structpb"

// CloneStruct is a deep copy of a Struct built by structpb (only its value
// kinds, no unknown fields): the same tree as proto.Clone gives, without
// reflection. A response's desired objects kept between calls are cloned
// so that every response owns what it carries.
func CloneStruct(s *structpb.Struct) *structpb.Struct {
	if s == nil {
		return nil
	}
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(s.GetFields()))}
	for k, v := range s.GetFields() {
		out.Fields[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v *structpb.Value) *structpb.Value {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return structpb.NewNullValue()
	case *structpb.Value_NumberValue:
		return structpb.NewNumberValue(k.NumberValue)
	case *structpb.Value_StringValue:
		return structpb.NewStringValue(k.StringValue)
	case *structpb.Value_BoolValue:
		return structpb.NewBoolValue(k.BoolValue)
	case *structpb.Value_StructValue:
		return structpb.NewStructValue(CloneStruct(k.StructValue))
	case *structpb.Value_ListValue:
		l := &structpb.ListValue{Values: make([]*structpb.Value, len(k.ListValue.GetValues()))}
		for i, e := range k.ListValue.GetValues() {
			l.Values[i] = cloneValue(e)
		}
		return structpb.NewListValue(l)
	default:
		// A Value without a kind, which structpb never builds.
		return &structpb.Value{}
	}
}
