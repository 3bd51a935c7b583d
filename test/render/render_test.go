// Package render runs `crossplane render` (CLI v2.5.0 with the v2.4.0 core
// as its engine) against the real function over gRPC for every example
// under examples/render, compares the output with its golden file, and
// validates it offline against the XRDs and Kubernetes' own types.
package render

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/internal/xptools"
)

var (
	update = flag.Bool("update", false, "rewrite the golden files under examples/render")
	// out is how make render keeps what this test renders: the same
	// function, flags and environment as the goldens, one file per example.
	out = flag.String("out", "", "also write each example's rendered output to DIR/<example>.yaml")
)

func TestRender(t *testing.T) {
	root := xptools.Root()
	crossplane, core := xptools.Crossplane(t), xptools.CrossplaneCore(t)
	addr := startFunction(t)
	rendered := t.TempDir()

	cases, err := filepath.Glob(filepath.Join(root, "examples", "render", "*", "xr.yaml"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no render examples found: %v", err)
	}
	for _, xr := range cases {
		dir := filepath.Dir(xr)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var head struct{ Kind string }
			b, err := os.ReadFile(xr)
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(b, &head); err != nil {
				t.Fatal(err)
			}
			comp, xrd, err := filesFor(head.Kind)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"render", xr, comp, "examples/functions.yaml",
				"--crossplane-binary=" + core, "--xrd=" + xrd, "--include-full-xr",
				"--include-function-results", "--timeout=60s",
				"-a", "render.crossplane.io/runtime-development-target=" + addr}
			for flagName, file := range map[string]string{"--observed-resources": "observed.yaml", "--required-resources": "required.yaml"} {
				if _, err := os.Stat(filepath.Join(dir, file)); err == nil {
					args = append(args, flagName+"="+filepath.Join(dir, file))
				}
			}
			got := stableResults(run(t, root, crossplane, args...))
			if *out != "" {
				if err := os.MkdirAll(*out, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(*out, filepath.Base(dir)+".yaml"), got, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			golden := filepath.Join(dir, "expected.yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./test/render -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("render output differs from %s (-want +got):\n%s", golden, diff)
			}

			keepObjects(t, rendered, filepath.Base(dir), got)
		})
	}
	validateRendered(t, root, crossplane, rendered)
}

// lastReconciled is the function's wall clock, which render cannot fix the
// way it fixes condition timestamps.
var lastReconciled = regexp.MustCompile(`(?m)^(\s*lastReconciled: ).*$`)

// stableResults puts the render.crossplane.io Result documents in a fixed
// order and pins lastReconciled. Crossplane reports each unready composed resource from a Go map, so
// their order varies between runs; every other document keeps its place.
func stableResults(out []byte) []byte {
	docs := bytes.Split(out, []byte("\n---\n"))
	var objects, results [][]byte
	for _, d := range docs {
		d = bytes.TrimRight(d, "\n")
		if bytes.Contains(d, []byte("apiVersion: render.crossplane.io/")) {
			results = append(results, d)
			continue
		}
		objects = append(objects, d)
	}
	sort.SliceStable(results, func(i, j int) bool { return bytes.Compare(results[i], results[j]) < 0 })
	out = append(bytes.Join(append(objects, results...), []byte("\n---\n")), '\n')
	return lastReconciled.ReplaceAll(out, []byte(`${1}"2024-01-01T00:00:00Z"`))
}

// keepObjects writes an example's rendered objects, without the
// render-only Result documents (they have no schema), to dir/<example>.yaml.
func keepObjects(t *testing.T, dir, example string, rendered []byte) {
	t.Helper()
	var keep [][]byte
	for _, doc := range bytes.Split(rendered, []byte("\n---\n")) {
		if bytes.Contains(doc, []byte("apiVersion: render.crossplane.io/")) {
			continue
		}
		keep = append(keep, doc)
	}
	if err := os.WriteFile(filepath.Join(dir, example+".yaml"), bytes.Join(keep, []byte("\n---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// validateRendered checks every rendered object against its schema in one
// run of crossplane resource validate (each run loads every schema: about
// 1.5 CPU-s, once per example before). When that run fails, each example
// is validated alone, so the failure names the example it came from.
func validateRendered(t *testing.T, root, crossplane, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rendered objects to validate in %s: %v", dir, err)
	}
	extensions := schemas(t)
	if _, ok := validateOutput(t, root, crossplane, extensions, dir); ok {
		return
	}
	failed := 0
	for _, f := range files {
		if out, ok := validateOutput(t, root, crossplane, extensions, f); !ok {
			failed++
			t.Errorf("crossplane resource validate of %s's rendered objects failed:\n%s", strings.TrimSuffix(filepath.Base(f), ".yaml"), out)
		}
	}
	if failed == 0 {
		out, _ := validateOutput(t, root, crossplane, extensions, dir)
		t.Errorf("crossplane resource validate of every example's rendered objects failed, but of none alone:\n%s", out)
	}
}

func run(t *testing.T, dir, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}
