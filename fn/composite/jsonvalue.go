package composite

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// Typed values are decoded from unstructured content through JSON on every
// call (see Decode). encoding/json encodes a map[string]any by reflection,
// and a Struct has to become such a map first; AppendJSON and
// AppendStructJSON write the same bytes directly. Each reports false for
// anything it does not cover (a type unstructured content does not hold,
// a number JSON cannot carry), and the caller then encodes with
// encoding/json, which fails or succeeds exactly as it always did.

// AppendJSON appends v, a JSON value as unstructured content holds it, as
// json.Marshal encodes it.
func AppendJSON(dst []byte, v any) ([]byte, bool) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, t), true
	case string:
		return appendJSONString(dst, t), true
	case float64:
		return appendJSONFloat(dst, t)
	case int64:
		return strconv.AppendInt(dst, t, 10), true
	case int:
		return strconv.AppendInt(dst, int64(t), 10), true
	case []any:
		if t == nil {
			return append(dst, "null"...), true
		}
		return appendArray(dst, t, AppendJSON)
	case map[string]any:
		if t == nil {
			return append(dst, "null"...), true
		}
		return appendObject(dst, t, AppendJSON)
	}
	return dst, false
}

// AppendStructJSON appends v as json.Marshal encodes v.AsInterface().
func AppendStructJSON(dst []byte, v *structpb.Value) ([]byte, bool) {
	switch k := v.GetKind().(type) {
	case nil, *structpb.Value_NullValue:
		return append(dst, "null"...), true
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(dst, k.BoolValue), true
	case *structpb.Value_StringValue:
		return appendJSONString(dst, k.StringValue), true
	case *structpb.Value_NumberValue:
		return appendJSONFloat(dst, k.NumberValue)
	case *structpb.Value_ListValue:
		return appendArray(dst, k.ListValue.GetValues(), AppendStructJSON)
	case *structpb.Value_StructValue:
		return appendObject(dst, k.StructValue.GetFields(), AppendStructJSON)
	}
	return dst, false
}

// appendArray appends a JSON array of elems, each written by elem.
func appendArray[V any](dst []byte, elems []V, elem func([]byte, V) ([]byte, bool)) ([]byte, bool) {
	dst = append(dst, '[')
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = elem(dst, e); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

// appendObject appends a JSON object of fields with its keys sorted, as
// encoding/json writes a map, each value written by elem.
func appendObject[V any](dst []byte, fields map[string]V, elem func([]byte, V) ([]byte, bool)) ([]byte, bool) {
	var scratch [32]string
	keys := scratch[:0]
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var ok bool
		if dst, ok = elem(dst, fields[k]); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// appendJSONFloat is encoding/json's float64 encoding: the shortest
// representation, in exponent form only for very small or large
// magnitudes, with a two-digit negative exponent shortened. NaN and
// infinities are not JSON.
func appendJSONFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

const hexDigits = "0123456789abcdef"

// appendJSONString is encoding/json's string encoding with HTML escaping,
// as json.Marshal writes it: invalid UTF-8 becomes U+FFFD, and U+2028 and
// U+2029 are escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
