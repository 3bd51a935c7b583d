package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCutRegistry cuts the registry of the golangci-lint hack/tools.sh
// builds with this repository's .golangci.yml: every linter the
// configuration names stays, with golangci-lint's standard group and its
// builtin typecheck, and nothing else.
func TestCutRegistry(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "go", "list", "-mod=readonly", "-m", "-f", "{{.Dir}}", "github.com/golangci/golangci-lint/v2")
	cmd.Dir = filepath.Join(root, "hack", "tools", "golangci-lint")
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("golangci-lint's module is not in the module cache (make setup downloads it): %v", err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "pkg", "lint", "lintersdb", "builder_linter.go"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(root, ".golangci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := Wanted(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := Cut(src, set)
	if err != nil {
		t.Fatal(err)
	}
	// The standard group, the builtin typecheck, and what the file names.
	want := slices.Sorted(maps.Keys(set.Packages))
	want = append(want, "errcheck", "golinters", "govet", "ineffassign", "staticcheck", "unused")
	sort.Strings(want)
	got := kept(cut)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("linters kept (-want +got):\n%s", diff)
	}
}
