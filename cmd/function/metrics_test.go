package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// TestServesMetrics runs the binary, makes one call and reads
// --metrics-address: the function's own metrics are served next to the
// SDK's gRPC server metrics and the Go runtime's, from one registry.
func TestServesMetrics(t *testing.T) {
	bin := buildFunction(t)
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	cmd := exec.CommandContext(t.Context(), bin, "--insecure", "--address="+addr, "--metrics-address="+metricsAddr)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitListening(t, addr)
	waitListening(t, metricsAddr)

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := fnv1.NewFunctionRunnerServiceClient(conn).RunFunction(ctx, &fnv1.RunFunctionRequest{
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
			`{"apiVersion":"example.org/v1","kind":"XOther","metadata":{"name":"x"}}`)}},
	}); err != nil {
		t.Fatalf("RunFunction: %v", err)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+metricsAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("cannot parse /metrics: %v", err)
	}

	value := func(name string, labels map[string]string) (float64, bool) {
		for _, m := range fams[name].GetMetric() {
			if hasLabels(m, labels) {
				switch {
				case m.GetCounter() != nil:
					return m.GetCounter().GetValue(), true
				case m.GetHistogram() != nil:
					return float64(m.GetHistogram().GetSampleCount()), true
				}
			}
		}
		return 0, false
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"function_firebolt_compose_duration_seconds", map[string]string{"kind": "other"}, 1},
		{"function_firebolt_results_total", map[string]string{"kind": "other", "severity": "fatal"}, 1},
		{"function_firebolt_drain_checks_total", map[string]string{"outcome": "drained"}, 0},
		{"grpc_server_handled_total", map[string]string{"grpc_method": "RunFunction", "grpc_code": "OK"}, 1},
	} {
		if got, ok := value(c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("go_goroutines missing: the Go runtime collector is not registered")
	}
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}
