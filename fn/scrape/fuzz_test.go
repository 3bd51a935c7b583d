package scrape

import (
	"bytes"
	"math"
	"testing"
)

// FuzzParse checks that no body makes Parse panic, that Parse is
// deterministic, and that it accepts only what could be an answer: a body
// naming both families (in text and protobuf alike the names appear
// verbatim) with finite, non-negative sums.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases(f) {
		f.Add([]byte(tc.body), tc.contentType)
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		q, err := Parse(body, contentType, DefaultMaxBodyBytes)
		q2, err2 := Parse(body, contentType, DefaultMaxBodyBytes)
		if (err == nil) != (err2 == nil) || q != q2 {
			t.Fatalf("Parse is not deterministic: (%v, %v) then (%v, %v)", q, err, q2, err2)
		}
		if err != nil {
			return
		}
		for _, name := range []string{RunningQueriesMetric, SuspendedQueriesMetric} {
			if !bytes.Contains(body, []byte(name)) {
				t.Fatalf("Parse accepted a body without %s: %q", name, body)
			}
		}
		for _, v := range []float64{q.Running, q.Suspended} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("Parse accepted an invalid value %v from %q", v, body)
			}
		}
	})
}
