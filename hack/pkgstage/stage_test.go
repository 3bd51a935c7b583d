package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const repoRoot = "../.."

// makefileDefault reads `NAME ?= value` from the Makefile, the one place
// the registry path and version are set.
func makefileDefault(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("Makefile sets no default for %s", name)
	}
	return string(m[1])
}

func TestCommittedFilesFollowMakefileRegistry(t *testing.T) {
	p := Packages{Registry: makefileDefault(t, "REGISTRY"), Version: makefileDefault(t, "VERSION")}
	want, err := Files(p)
	if err != nil {
		t.Fatal(err)
	}
	for path, w := range want {
		got, err := os.ReadFile(filepath.Join(repoRoot, path))
		if err != nil {
			t.Errorf("%s: %v (run make generate)", path, err)
			continue
		}
		if diff := cmp.Diff(string(w), string(got)); diff != "" {
			t.Errorf("%s is stale; run make generate (-want +got):\n%s", path, diff)
		}
	}
}

func TestFunctionRefFollowsRegistry(t *testing.T) {
	cases := map[string]struct {
		registry string
		want     string
	}{
		"GHCR":           {registry: "ghcr.io/firebolt-db", want: "firebolt-db-function-firebolt"},
		"LoopbackPort":   {registry: "127.0.0.1:5000/firebolt-db", want: "firebolt-db-function-firebolt"},
		"NestedPath":     {registry: "xpkg.example.org/acme/data", want: "acme-data-function-firebolt"},
		"DockerHubShort": {registry: "acme", want: "acme-function-firebolt"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files, err := Files(Packages{Registry: tc.registry, Version: "v1.2.3"})
			if err != nil {
				t.Fatal(err)
			}
			var meta struct {
				Spec struct {
					DependsOn []struct{ Package, Version string } `json:"dependsOn"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(files["crossplane.yaml"], &meta); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]struct{ Package, Version string }{{tc.registry + "/function-firebolt", ">=v1.2.3"}}, meta.Spec.DependsOn); diff != "" {
				t.Errorf("dependsOn (-want +got):\n%s", diff)
			}
			for _, c := range composites {
				var comp struct {
					Spec struct {
						Pipeline []struct {
							FunctionRef struct{ Name string } `json:"functionRef"`
						} `json:"pipeline"`
					} `json:"spec"`
				}
				if err := yaml.Unmarshal(files["composition/"+c.file], &comp); err != nil {
					t.Fatal(err)
				}
				if len(comp.Spec.Pipeline) != 1 || comp.Spec.Pipeline[0].FunctionRef.Name != tc.want {
					t.Errorf("%s: functionRef %+v, want %q", c.file, comp.Spec.Pipeline, tc.want)
				}
			}
		})
	}
}

func TestInvalidRegistryIsRejected(t *testing.T) {
	for _, r := range []string{"", "ghcr.io/firebolt-db/", "ghcr.io/Firebolt DB"} {
		if _, err := Files(Packages{Registry: r, Version: "v0.1.0"}); err == nil {
			t.Errorf("registry %q: want error, got none", r)
		}
	}
	if _, err := Files(Packages{Registry: "ghcr.io/firebolt-db", Version: "0.1.0"}); err == nil {
		t.Error("version without v: want error, got none")
	}
}
