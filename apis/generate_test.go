package apis_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// generatedDirs are the folders whose YAML hack/generate.sh owns entirely;
// a committed file it no longer generates is stale too.
var generatedDirs = []string{"apis/definitions", "package/input"}

// TestGeneratedFilesAreCurrent regenerates everything into a temporary
// folder and fails when a committed file differs: run hack/generate.sh
// (make generate) and commit the result.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "hack", "generate.sh"), out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/generate.sh failed: %v\n%s", err, b)
	}

	generated := map[string]bool{}
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		generated[rel] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(generated) == 0 {
		t.Fatal("hack/generate.sh generated nothing")
	}

	for _, dir := range generatedDirs {
		committed, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range committed {
			rel, _ := filepath.Rel(root, c)
			if !generated[rel] {
				t.Errorf("%s is committed but no longer generated; delete it (run hack/generate.sh)", rel)
			}
		}
	}

	files := make([]string, 0, len(generated))
	for f := range generated {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Errorf("%s is generated but not committed; run hack/generate.sh", f)
			continue
		}
		if bytes.Equal(want, got) {
			continue
		}
		t.Errorf("%s is stale; run hack/generate.sh (make generate). -generated, +committed:\n%s", f, firstLines(cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")), 80))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + "…\n"
}
