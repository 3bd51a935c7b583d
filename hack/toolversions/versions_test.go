package toolversions

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// The wrappers whose builds share the project's compiled packages. etcd,
// provider-kubernetes, controller-gen, golangci-lint and the Prometheus
// Operator's CRD generator keep their releases' own versions: aligning etcd
// made it compile newer, larger releases first and slowed it
// (docs/development.md), and the others share little with the project.
var sharing = []string{"kube", "cert-manager-kwok", "prometheus"}

// Modules a wrapper may hold at another version, and why.
var differ = map[string]string{
	// The project's port-forward test serves with kubelet's
	// pkg/cri/streaming/portforward, which v0.36 no longer has; the servers
	// compile nothing of k8s.io/kubelet that the project does.
	"k8s.io/kubelet": "the project's tests need v0.35's portforward package",
}

func TestWrappersRequireTheProjectsVersions(t *testing.T) {
	project := versions(t, filepath.Join("..", "..", "go.mod"))
	for _, w := range sharing {
		file := filepath.Join("..", "tools", w, "go.mod")
		got := versions(t, file)
		shared := 0
		for path, v := range got {
			pv, ok := project[path]
			if !ok {
				continue
			}
			shared++
			if pv != v && differ[path] == "" {
				t.Errorf("hack/tools/%s/go.mod: %s is %s, the project's go.mod has %s; require the same version in both (the newer), then go mod tidy in each", w, path, v, pv)
			}
		}
		// A wrapper that shares nothing would pass vacuously: its go.mod
		// moved or its parsing broke.
		if shared < 50 {
			t.Errorf("hack/tools/%s/go.mod shares %d modules with the project's go.mod, want at least 50", w, shared)
		}
	}
}

// versions reads the version a go.mod selects for each module it requires,
// a replacement's where a replace directive points at another release (the
// Kubernetes wrapper's staging modules).
func versions(t *testing.T, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("cannot read %s: %v", file, err)
	}
	f, err := modfile.Parse(file, data, nil)
	if err != nil {
		t.Fatalf("cannot parse %s: %v", file, err)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		if r.New.Version != "" && (r.Old.Version == "" || r.Old.Version == out[r.Old.Path]) {
			out[r.Old.Path] = r.New.Version
		}
	}
	return out
}
