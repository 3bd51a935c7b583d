package scrape

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkDrain100Pods is one drain check of a 100-pod generation, all
// drained, through the API-server proxy transport against a local server:
// one list and 100 proxied scrapes of a realistic exposition.
func BenchmarkDrain100Pods(b *testing.B) {
	body := realisticBody()
	pods := make([]corev1.Pod, 100)
	proxy := map[string]http.HandlerFunc{}
	for i := range pods {
		pods[i] = pod(fmt.Sprintf("e-g1-%02d", i), corev1.PodRunning)
		proxy[pods[i].Name] = serveMetrics(textPlain, body)
	}
	f := newFakeAPI(b, pods, proxy)
	c := f.client(b, Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if v := c.Drain(ctx, testNamespace, testSelector); v != (Verdict{Drained: true}) {
			b.Fatalf("Drain: %+v", v)
		}
	}
}

// BenchmarkParse parses one realistic engine exposition.
func BenchmarkParse(b *testing.B) {
	body := []byte(realisticBody())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body, textPlain, DefaultMaxBodyBytes); err != nil {
			b.Fatal(err)
		}
	}
}
