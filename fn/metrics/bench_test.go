package metrics

import (
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// BenchmarkStableCall is what one call for a stable engine adds: the call's
// duration and results, and the engine's phase, among 500 tracked engines.
func BenchmarkStableCall(b *testing.B) {
	m, err := New(prometheus.NewRegistry(), []string{"XFireboltEngine"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 500 {
		m.EngineComposed(Engine{Namespace: "ns", Name: "e" + strconv.Itoa(i), From: "stable", To: "stable", TTL: time.Minute})
	}
	e := Engine{Namespace: "ns", Name: "e42", From: "stable", To: "stable", TTL: time.Minute}
	results := []*fnv1.Result{}
	b.ReportAllocs()
	for b.Loop() {
		m.Composed("XFireboltEngine", time.Millisecond, results)
		m.EngineComposed(e)
	}
}
