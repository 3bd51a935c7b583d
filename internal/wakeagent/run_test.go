package wakeagent

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestRun runs the agent as the wake-agent command does, against a fake
// API server with no EndpointSlices: a request for an engine is stamped
// and held until the hold timeout, both listeners serve /healthz, the
// metrics listener serves the agent's metrics, and cancelling the context
// shuts it all down.
func TestRun(t *testing.T) {
	api := newFakeAPI(t)
	hold, metrics := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Address: hold, MetricsAddress: metrics, Namespace: testNamespace,
			Config:      &rest.Config{Host: api.srv.URL},
			HoldTimeout: time.Millisecond, StampInterval: time.Minute, Capacity: 1,
			Log: (&logLines{}).logger(),
		})
	}()

	get := func(url string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err.Error()
		}
		defer rsp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(rsp.Body, 1<<20))
		return rsp.StatusCode, rsp.Header.Get(DecisionHeader), string(b)
	}
	// Until the informer syncs, requests route through.
	deadline := time.Now().Add(waitBound)
	for {
		_, decision, body := get("http://" + hold + "/hold?engine=e")
		if decision == DecisionTimeout {
			break
		}
		if decision != DecisionUnsynced && decision != "" {
			t.Fatalf("unexpected decision %q: %s", decision, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not start holding: last %q %s", decision, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if diff := cmp.Diff([]patch{{
		Method: http.MethodPatch, Path: "/apis/compute.firebolt.io/v1alpha1/namespaces/gw/fireboltengines/e",
		ContentType: "application/merge-patch+json",
	}}, api.received(), cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Body" }, cmp.Ignore())); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}

	for _, addr := range []string{hold, metrics} {
		if code, _, body := get("http://" + addr + "/healthz"); code != http.StatusOK || body != "ok\n" {
			t.Errorf("%s/healthz: %d %q", addr, code, body)
		}
	}
	_, _, body := get("http://" + metrics + "/metrics")
	for _, want := range []string{
		`firebolt_gateway_wake_stamps_total{result="ok"} 1`,
		`firebolt_gateway_wake_pending_holds{engine="e"} 0`,
		`firebolt_gateway_wake_demand_dropped_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(waitBound):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

func TestRunRefusesBadOptions(t *testing.T) {
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	cases := map[string]Options{
		"NoNamespace":   {Config: cfg, HoldTimeout: time.Second, StampInterval: time.Second},
		"NoHoldTimeout": {Config: cfg, Namespace: "gw", StampInterval: time.Second},
		"NoInterval":    {Config: cfg, Namespace: "gw", HoldTimeout: time.Second},
		"BadAddress":    {Config: cfg, Namespace: "gw", HoldTimeout: time.Second, StampInterval: time.Second, Address: "127.0.0.1:bad", MetricsAddress: "127.0.0.1:0"},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			o.Log = (&logLines{}).logger()
			if err := Run(t.Context(), o); err == nil {
				t.Error("Run accepted bad options")
			}
		})
	}
}
