package composite

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

// jsonEdgeStrings are strings whose encoding json.Marshal escapes or
// repairs.
var jsonEdgeStrings = []string{
	"", "plain", `q"uote`, `back\slash`, "<a href='x'>&amp;</a>", "\b\f\n\r\t", "\x00\x01\x1f\x7f",
	"caf\u00e9 \u2028 \u2029 \U0001F600", "bad \xff\xfe utf8", "trunc \xe2\x82", "ключ",
}

// jsonEdgeNumbers sit on encoding/json's format boundaries.
var jsonEdgeNumbers = []float64{
	0, math.Copysign(0, -1), 1, -1, 2.5, 1e20, 1e21, 1e-6, 1e-7, 9.999999e-7, 123456789.123, -4.2e-9,
	5e-324, math.MaxFloat64, -math.MaxFloat64, 1 << 53, 1e100,
}

func randomJSON(r *rand.Rand, depth int) any {
	switch n := r.IntN(8); {
	case depth > 4 || n < 2:
		return jsonEdgeStrings[r.IntN(len(jsonEdgeStrings))]
	case n == 2:
		return jsonEdgeNumbers[r.IntN(len(jsonEdgeNumbers))]
	case n == 3:
		return r.IntN(2) == 0
	case n == 4:
		return nil
	case n == 5:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomJSON(r, depth+1)
		}
		return l
	default:
		m := map[string]any{}
		for range r.IntN(12) {
			m[jsonEdgeStrings[r.IntN(len(jsonEdgeStrings))]+string(rune('a'+r.IntN(26)))] = randomJSON(r, depth+1)
		}
		return m
	}
}

// TestAppendJSONIsMarshal: both encoders write exactly json.Marshal's
// bytes for every value they cover, and decline what Marshal refuses.
func TestAppendJSONIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const random = 500
	values := make([]any, 0, 7+random)
	values = append(values, nil, map[string]any(nil), []any(nil), map[string]any{}, []any{}, int64(-7), 42)
	for range random {
		values = append(values, randomJSON(r, 0))
	}
	structs := 0
	for i, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := AppendJSON(nil, v); !ok || !bytes.Equal(got, want) {
			t.Fatalf("value %d: AppendJSON: want %s, got %s (%v)", i, want, got, ok)
		}
		sv, err := structpb.NewValue(v)
		if err != nil {
			// Protobuf strings are valid UTF-8: a request never holds
			// one that is not.
			continue
		}
		structs++
		want, err = json.Marshal(sv.AsInterface())
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := AppendStructJSON([]byte("prefix"), sv); !ok || string(got) != "prefix"+string(want) {
			t.Fatalf("value %d: AppendStructJSON: want %s, got %s (%v)", i, want, got, ok)
		}
	}
	if structs < 100 {
		t.Fatalf("only %d values compared as Structs", structs)
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		v := map[string]any{"a": []any{f}}
		if _, err := json.Marshal(v); err == nil {
			t.Fatalf("json.Marshal accepts %v", f)
		}
		if _, ok := AppendJSON(nil, v); ok {
			t.Errorf("AppendJSON accepts %v", f)
		}
		if _, ok := AppendStructJSON(nil, structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(f)}})); ok {
			t.Errorf("AppendStructJSON accepts %v", f)
		}
	}
	if _, ok := AppendJSON(nil, map[string]any{"a": struct{}{}}); ok {
		t.Error("AppendJSON accepts a type unstructured content does not hold")
	}
	if got, ok := AppendStructJSON(nil, nil); !ok || string(got) != "null" {
		t.Errorf("AppendStructJSON(nil): want null, got %s", got)
	}
	if !strings.Contains(string(must(AppendJSON(nil, "<"))), `\u003c`) {
		t.Error("HTML is not escaped")
	}
}

func must(b []byte, ok bool) []byte {
	if !ok {
		panic("not encoded")
	}
	return b
}
