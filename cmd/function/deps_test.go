package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOutUnusedAPIs: code the function does not need stays out
// of its binary, because every page of the executable it maps and touches
// is resident memory in every replica. envoy.yaml is rendered from the
// function's own types (go-control-plane only checks them, in tests), so
// that module is not even imported.
//
// client-go's clientset of every API group and its informers are imported
// (client-go's leader election refers to them for its coordinated mode,
// which the state metrics do not use), so what counts for them is what the
// linker keeps: only the typed clients of the groups the binary calls
// (core for drain checks, apps and coordination for the state metrics,
// discovery for the wake agent), never the clientset or the informers.
func TestBinaryLeavesOutUnusedAPIs(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/envoyproxy/go-control-plane/") {
			t.Errorf("the function links %s (Envoy's generated API types)", pkg)
		}
	}

	nm, err := exec.CommandContext(t.Context(), "go", "tool", "nm", buildFunction(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, nm)
	}
	const typed = "k8s.io/client-go/kubernetes/typed/"
	used := map[string]bool{"core/v1": true, "apps/v1": true, "coordination/v1": true, "discovery/v1": true}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(nm), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		sym := f[len(f)-1]
		switch {
		case strings.HasPrefix(sym, "k8s.io/client-go/kubernetes."):
			seen["client-go's clientset of every API group (k8s.io/client-go/kubernetes)"] = true
		case strings.HasPrefix(sym, "k8s.io/client-go/informers"):
			seen["client-go's informers of every API group (k8s.io/client-go/informers)"] = true
		case strings.HasPrefix(sym, typed):
			group, _, _ := strings.Cut(strings.TrimPrefix(sym, typed), ".")
			if !used[group] {
				seen["the typed client of "+group] = true
			}
		}
	}
	for what := range seen {
		t.Errorf("the function's binary holds code of %s", what)
	}
}
