// Package xptools finds the pinned Crossplane tools (and promtool) for
// tests. The tools are built once into a cache outside the repository by
// hack/tools.sh (minutes on a fresh machine, instant afterwards), so `go
// test ./...` works on its own. CROSSPLANE, CROSSPLANE_CORE,
// CROSSPLANE_CRDS, PROVIDER_KUBERNETES_CRDS, PROMTOOL and
// PROMETHEUS_OPERATOR_CRDS override them.
package xptools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// module is the first line of the repository's go.mod.
const module = "module github.com/firebolt-db/firebolt-crossplane\n"

// Root is the repository root: the nearest directory at or above the working
// directory whose go.mod is this module's. `go test` runs each test in its
// package's directory and `make` runs in the root. The source file's own
// path cannot say where the root is: make builds with -trimpath, which
// leaves runtime.Caller a module-relative name.
var Root = sync.OnceValue(func() string {
	dir, err := os.Getwd()
	if err != nil {
		panic("cannot find the repository root: " + err.Error())
	}
	for range 64 { // no real checkout is nested deeper
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), module) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	panic("cannot find the repository root: no go.mod of " + strings.TrimSpace(strings.TrimPrefix(module, "module ")) + " at or above the working directory; run from inside the checkout")
})

var (
	mu    sync.Mutex
	paths = map[string]string{}
)

func tool(t testing.TB, name, env string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := paths[name]; ok {
		return p
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(Root(), "hack", "tools.sh"), name)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cannot build %s with hack/tools.sh: %v", name, err)
	}
	p := strings.TrimSpace(string(out))
	paths[name] = p
	return p
}

// Crossplane is the Crossplane CLI (render, resource validate, xpkg).
func Crossplane(t testing.TB) string { return tool(t, "crossplane", "CROSSPLANE") }

// CrossplaneCore is the Crossplane core binary that `crossplane render`
// runs as its engine (--crossplane-binary).
func CrossplaneCore(t testing.TB) string { return tool(t, "crossplane-core", "CROSSPLANE_CORE") }

// CrossplaneCRDs is the directory of Crossplane's own CRDs (Composition,
// XRD, Function, Usage, ...) from the pinned core module, for offline
// validation of Crossplane kinds.
func CrossplaneCRDs(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CROSSPLANE_CRDS"); p != "" {
		return p
	}
	return filepath.Join(tool(t, "crossplane-module", ""), "cluster", "crds")
}

// ProviderKubernetesCRDs is the directory of the pinned provider-kubernetes
// module's CRDs (Object, ProviderConfig, ...), for offline validation of
// what deploy/ and the compositions hold of its kinds.
func ProviderKubernetesCRDs(t testing.TB) string {
	return tool(t, "provider-kubernetes-crds", "PROVIDER_KUBERNETES_CRDS")
}

// CertManagerCRDs is the directory of the pinned cert-manager module's CRDs
// (Certificate, CertificateRequest, issuers), for offline validation of
// the signing keys' Certificates an instance composes.
func CertManagerCRDs(t testing.TB) string {
	return tool(t, "cert-manager-crds", "CERT_MANAGER_CRDS")
}

// Promtool is promtool of the pinned Prometheus module, which checks the
// monitoring kit's rules and derived scrape configuration.
func Promtool(t testing.TB) string { return tool(t, "promtool", "PROMTOOL") }

// PrometheusOperatorCRDs is the directory of the Prometheus Operator's CRDs
// (PodMonitor, PrometheusRule, ...) generated from its pinned API module,
// for offline validation of deploy/monitoring.
func PrometheusOperatorCRDs(t testing.TB) string {
	return tool(t, "prometheus-operator-crds", "PROMETHEUS_OPERATOR_CRDS")
}
