// Package toolmods checks that the tool wrappers built to share compiled
// packages with the project still do: a wrapper that requires an older
// version of a module than the project compiles that module's packages a
// second time, which on the 2-core CI machine costs minutes of a cold run
// (each wrapper's go.mod says how to refresh it).
package toolmods

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/semver"
)

// wrappers are the aligned wrappers, the packages they build, and the
// module prefixes whose versions are the tool's own: its modules, and for
// Kubernetes the libraries its API machinery is built against.
var wrappers = []struct {
	dir  string
	pkgs []string
	own  []string
}{
	{"etcd", []string{"."}, []string{"go.etcd.io/etcd/"}},
	{"prometheus", []string{"github.com/prometheus/prometheus/cmd/prometheus", "github.com/prometheus/prometheus/cmd/promtool"}, []string{"github.com/prometheus/prometheus"}},
	{"cert-manager-kwok", []string{".", "sigs.k8s.io/kwok/cmd/kwok"}, []string{"github.com/cert-manager/cert-manager", "sigs.k8s.io/kwok"}},
	{"kube", []string{"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager", "k8s.io/kubernetes/cmd/kube-scheduler", "k8s.io/kubernetes/cmd/kubectl"}, []string{
		"k8s.io/", "sigs.k8s.io/", "cel.dev/", "github.com/google/cel-go", "github.com/antlr4-go/", "github.com/go-openapi/",
		"github.com/google/gnostic-models", "github.com/emicklei/go-restful", "github.com/mailru/easyjson", "github.com/spf13/",
		"github.com/moby/", "gopkg.in/evanphx/json-patch", "github.com/containerd/", "github.com/opencontainers/", "github.com/cyphar/",
	}},
}

// modules runs go list in dir and returns module path -> version.
func modules(t *testing.T, dir string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", append([]string{"list", "-mod=readonly"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s in %s: %v", strings.Join(args, " "), dir, err)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

func TestWrappersShareProjectVersions(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	project := modules(t, root, "-m", "-f", "{{.Path}} {{.Version}}", "all")
	for _, w := range wrappers {
		t.Run(w.dir, func(t *testing.T) {
			args := append([]string{"-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}"}, w.pkgs...)
			used := modules(t, filepath.Join(root, "hack", "tools", w.dir), args...)
			if len(used) < 10 {
				t.Fatalf("the build of %s compiles %d modules; go list found too few to check", w.dir, len(used))
			}
			for m, v := range used {
				pv, ok := project[m]
				if !ok || v == "" || slices.ContainsFunc(w.own, func(p string) bool { return strings.HasPrefix(m, p) }) {
					continue
				}
				if semver.Compare(v, pv) < 0 {
					t.Errorf("hack/tools/%s builds %s %s, the project %s: require the project's version (its go.mod says how)", w.dir, m, v, pv)
				}
			}
		})
	}
}
