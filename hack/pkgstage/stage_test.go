package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
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
			want := []struct{ Package, Version string }{
				{tc.registry + "/function-firebolt", ">=v1.2.3, <v2.0.0-0"},
				// The provider is published upstream, wherever the
				// product is.
				{ProviderKubernetesPackage, ProviderKubernetesConstraint},
			}
			if diff := cmp.Diff(want, meta.Spec.DependsOn); diff != "" {
				t.Errorf("dependsOn (-want +got):\n%s", diff)
			}
			for _, c := range v1alpha1.Composites {
				var comp struct {
					Spec struct {
						Pipeline []struct {
							FunctionRef struct{ Name string } `json:"functionRef"`
						} `json:"pipeline"`
					} `json:"spec"`
				}
				if err := yaml.Unmarshal(files["composition/"+c.Composition], &comp); err != nil {
					t.Fatal(err)
				}
				if len(comp.Spec.Pipeline) != 1 || comp.Spec.Pipeline[0].FunctionRef.Name != tc.want {
					t.Errorf("%s: functionRef %+v, want %q", c.Composition, comp.Spec.Pipeline, tc.want)
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

// The Configuration accepts patch and compatible releases of the Function and
// refuses the next breaking one, read with the semver library Crossplane's
// dependency resolver uses.
func TestFunctionConstraintHasUpperBound(t *testing.T) {
	cases := map[string]struct {
		version string
		accept  []string
		refuse  []string
	}{
		"ZeroMajor": {version: "v0.1.0", accept: []string{"v0.1.0", "v0.1.7"}, refuse: []string{"v0.0.9", "v0.2.0", "v0.2.0-rc.1", "v1.0.0"}},
		"Major":     {version: "v1.2.3", accept: []string{"v1.2.3", "v1.9.0"}, refuse: []string{"v1.2.2", "v2.0.0", "v2.0.0-rc.1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Packages{Registry: "ghcr.io/firebolt-db", Version: tc.version}.FunctionConstraint()
			if err != nil {
				t.Fatal(err)
			}
			c, err := semver.NewConstraint(s)
			if err != nil {
				t.Fatalf("constraint %q does not parse: %v", s, err)
			}
			for _, v := range tc.accept {
				if !c.Check(semver.MustParse(v)) {
					t.Errorf("%q refuses %s, want accepted", s, v)
				}
			}
			for _, v := range tc.refuse {
				if c.Check(semver.MustParse(v)) {
					t.Errorf("%q accepts %s, want refused", s, v)
				}
			}
		})
	}
}

// The instance's function input names the wake agent's image as the Function
// package this Configuration is built with, wherever it is published; the
// other kinds take the function's defaults.
func TestWakeAgentImageFollowsThePackage(t *testing.T) {
	files, err := Files(Packages{Registry: "xpkg.example.org/acme", Version: "v1.4.2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v1alpha1.Composites {
		var comp struct {
			Spec struct {
				Pipeline []struct {
					Input struct {
						Spec *struct {
							Images struct {
								WakeAgent string `json:"wakeAgent"`
							} `json:"images"`
						} `json:"spec"`
					} `json:"input"`
				} `json:"pipeline"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(files["composition/"+c.Composition], &comp); err != nil {
			t.Fatal(err)
		}
		if len(comp.Spec.Pipeline) != 1 {
			t.Fatalf("%s: %d pipeline steps, want 1", c.Composition, len(comp.Spec.Pipeline))
		}
		in := comp.Spec.Pipeline[0].Input.Spec
		switch {
		case c.Kind == v1alpha1.XFireboltInstanceKind && (in == nil || in.Images.WakeAgent != "xpkg.example.org/acme/function-firebolt:v1.4.2"):
			t.Errorf("%s: input spec %+v, want images.wakeAgent xpkg.example.org/acme/function-firebolt:v1.4.2", c.Composition, in)
		case c.Kind != v1alpha1.XFireboltInstanceKind && in != nil:
			t.Errorf("%s: input spec %+v, want none", c.Composition, in)
		}
	}
}

// The Configuration accepts the provider-kubernetes the end-to-end stack
// builds (v0.17.1) and every v1.x release clusters run, and refuses older
// releases, the next major and every pre-release, read with the semver
// library Crossplane's dependency resolver uses.
func TestProviderKubernetesConstraint(t *testing.T) {
	c, err := semver.NewConstraint(ProviderKubernetesConstraint)
	if err != nil {
		t.Fatalf("constraint %q does not parse: %v", ProviderKubernetesConstraint, err)
	}
	for _, v := range []string{"v0.17.1", "v0.18.0", "v1.0.0", "v1.2.1"} {
		if !c.Check(semver.MustParse(v)) {
			t.Errorf("%q refuses %s, want accepted", ProviderKubernetesConstraint, v)
		}
	}
	for _, v := range []string{"v0.17.0", "v0.16.2", "v1.1.0-rc.1", "v2.0.0-rc.1", "v2.0.0", "v3.0.0"} {
		if c.Check(semver.MustParse(v)) {
			t.Errorf("%q accepts %s, want refused", ProviderKubernetesConstraint, v)
		}
	}
}

// deploy/imageconfig.yaml applies the provider's runtime config to exactly
// the package the Configuration depends on, whatever the product's registry.
func TestProviderImageConfigMatchesTheDependency(t *testing.T) {
	files, err := Files(Packages{Registry: "xpkg.example.org/acme", Version: "v1.4.2"})
	if err != nil {
		t.Fatal(err)
	}
	type imageConfig struct {
		Metadata struct{ Name string } `json:"metadata"`
		Spec     struct {
			MatchImages []struct{ Type, Prefix string } `json:"matchImages"`
			Runtime     struct {
				ConfigRef struct{ Name string } `json:"configRef"`
			} `json:"runtime"`
		} `json:"spec"`
	}
	var found bool
	for _, doc := range strings.Split(string(files["deploy/imageconfig.yaml"]), "\n---\n") {
		var ic imageConfig
		if err := yaml.Unmarshal([]byte(doc), &ic); err != nil {
			t.Fatal(err)
		}
		for _, m := range ic.Spec.MatchImages {
			if strings.HasPrefix(ProviderKubernetesPackage, m.Prefix) {
				found = true
				if ic.Spec.Runtime.ConfigRef.Name != ProviderKubernetesRuntimeConfig {
					t.Errorf("ImageConfig %s applies runtime config %q to %s, want %q", ic.Metadata.Name, ic.Spec.Runtime.ConfigRef.Name, ProviderKubernetesPackage, ProviderKubernetesRuntimeConfig)
				}
			}
		}
	}
	if !found {
		t.Errorf("no ImageConfig in deploy/imageconfig.yaml matches %s:\n%s", ProviderKubernetesPackage, files["deploy/imageconfig.yaml"])
	}
}
