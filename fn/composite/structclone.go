package composite

import "google.golang.org/protobuf/types/known/structpb"

// CloneStruct is a deep copy of a Struct built by structpb (only its value
// kinds, no unknown fields): the same tree as proto.Clone gives, without
// reflection. A response's desired objects kept between calls are cloned
// so that every response owns what it carries. The nodes are allocated in
// a few slabs, counted first, rather than one by one: a clone is made on
// every call, and its nodes live and die together with the response.
func CloneStruct(s *structpb.Struct) *structpb.Struct {
	return NewStructTemplate(s).Clone()
}

// StructTemplate is a Struct kept to be cloned on many calls, its nodes
// counted once rather than on every clone. The Struct must not change
// once it is a template.
type StructTemplate struct {
	s *structpb.Struct
	n nodeCount
}

// NewStructTemplate makes s a template; nil stays nil.
func NewStructTemplate(s *structpb.Struct) *StructTemplate {
	if s == nil {
		return nil
	}
	t := &StructTemplate{s: s}
	t.n.countStruct(s)
	return t
}

// Struct is the template itself, to be read and never written.
func (t *StructTemplate) Struct() *structpb.Struct {
	if t == nil {
		return nil
	}
	return t.s
}

// Clone is a deep copy of the template, as CloneStruct makes.
func (t *StructTemplate) Clone() *structpb.Struct {
	if t == nil {
		return nil
	}
	n := t.n
	c := &cloner{
		structs: make([]structpb.Struct, n.structs),
		lists:   make([]structpb.ListValue, n.lists),
		values:  make([]structpb.Value, n.values),
		strs:    make([]structpb.Value_StringValue, n.strs),
		nums:    make([]structpb.Value_NumberValue, n.nums),
		bools:   make([]structpb.Value_BoolValue, n.bools),
		svs:     make([]structpb.Value_StructValue, n.svs),
		lvs:     make([]structpb.Value_ListValue, n.lvs),
		nulls:   make([]structpb.Value_NullValue, n.nulls),
	}
	return c.cloneStruct(t.s)
}

type nodeCount struct {
	structs, lists, values, strs, nums, bools, svs, lvs, nulls int
}

func (n *nodeCount) countStruct(s *structpb.Struct) {
	n.structs++
	for _, v := range s.GetFields() {
		n.countValue(v)
	}
}

func (n *nodeCount) countValue(v *structpb.Value) {
	n.values++
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		n.nulls++
	case *structpb.Value_NumberValue:
		n.nums++
	case *structpb.Value_StringValue:
		n.strs++
	case *structpb.Value_BoolValue:
		n.bools++
	case *structpb.Value_StructValue:
		n.svs++
		n.countStruct(k.StructValue)
	case *structpb.Value_ListValue:
		n.lvs++
		n.lists++
		for _, e := range k.ListValue.GetValues() {
			n.countValue(e)
		}
	}
}

// cloner hands out the slabs' elements in order.
type cloner struct {
	structs []structpb.Struct
	lists   []structpb.ListValue
	values  []structpb.Value
	strs    []structpb.Value_StringValue
	nums    []structpb.Value_NumberValue
	bools   []structpb.Value_BoolValue
	svs     []structpb.Value_StructValue
	lvs     []structpb.Value_ListValue
	nulls   []structpb.Value_NullValue
}

func take[T any](s *[]T) *T {
	p := &(*s)[0]
	*s = (*s)[1:]
	return p
}

func (c *cloner) cloneStruct(s *structpb.Struct) *structpb.Struct {
	out := take(&c.structs)
	if s.GetFields() == nil {
		return out
	}
	out.Fields = make(map[string]*structpb.Value, len(s.GetFields()))
	for k, v := range s.GetFields() {
		out.Fields[k] = c.cloneValue(v)
	}
	return out
}

func (c *cloner) cloneValue(v *structpb.Value) *structpb.Value {
	out := take(&c.values)
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		kv := take(&c.nulls)
		kv.NullValue = k.NullValue
		out.Kind = kv
	case *structpb.Value_NumberValue:
		kv := take(&c.nums)
		kv.NumberValue = k.NumberValue
		out.Kind = kv
	case *structpb.Value_StringValue:
		kv := take(&c.strs)
		kv.StringValue = k.StringValue
		out.Kind = kv
	case *structpb.Value_BoolValue:
		kv := take(&c.bools)
		kv.BoolValue = k.BoolValue
		out.Kind = kv
	case *structpb.Value_StructValue:
		kv := take(&c.svs)
		kv.StructValue = c.cloneStruct(k.StructValue)
		out.Kind = kv
	case *structpb.Value_ListValue:
		kv := take(&c.lvs)
		l := take(&c.lists)
		if k.ListValue.GetValues() != nil {
			l.Values = make([]*structpb.Value, len(k.ListValue.GetValues()))
			for i, e := range k.ListValue.GetValues() {
				l.Values[i] = c.cloneValue(e)
			}
		}
		kv.ListValue = l
		out.Kind = kv
	}
	// A Value without a kind, which structpb never builds, stays without.
	return out
}
