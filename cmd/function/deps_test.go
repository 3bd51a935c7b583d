package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOutUnusedAPIs: packages whose code the function does not
// need stay out of its binary, because every page of the executable it maps
// and touches is resident memory in every replica. envoy.yaml is rendered
// from the function's own types (go-control-plane only checks them, in
// tests), and only the core group's typed client is used, not the clientset
// of every API group.
func TestBinaryLeavesOutUnusedAPIs(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := map[string]string{
		"github.com/envoyproxy/go-control-plane/": "Envoy's generated API types",
		"k8s.io/client-go/kubernetes":             "client-go's clientset of every API group",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for prefix, what := range forbidden {
			if strings.HasPrefix(pkg, prefix) && (strings.HasSuffix(prefix, "/") || pkg == prefix) {
				t.Errorf("the function links %s (%s)", pkg, what)
			}
		}
	}
}
