// Package packages builds the Function and Configuration packages and the
// kubectl plugin's archives the way `make xpkg` does, proves the build is
// reproducible, pushes both packages to a loopback OCI registry with
// `crossplane xpkg push` and reads them back, and checks the plugin's krew
// manifest against its archives.
package packages

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/mod/modfile"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/internal/xptools"
)

const version = "v0.1.0"

// sumLines are sha256sum's lines in a build's output.
var sumLines = regexp.MustCompile(`(?m)^[0-9a-f]{64}  \S+$`)

func TestPackagesAreReproducibleAndPush(t *testing.T) {
	root := xptools.Root()
	crossplane := xptools.Crossplane(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	reg := strings.TrimPrefix(srv.URL, "http://") + "/firebolt-db"
	if !slices.Contains(shippedPlatforms(t, root), hostPlatform) {
		t.Fatalf("the plugin does not ship for this machine's %s/%s, which the package test builds it for", hostPlatform.os, hostPlatform.arch)
	}

	build := func(out string) string {
		cmd := exec.CommandContext(t.Context(), filepath.Join(root, "hack", "xpkg.sh"), out)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "REGISTRY="+reg, "VERSION="+version, "CROSSPLANE="+crossplane,
			"PLUGIN_PLATFORMS="+hostPlatform.os+"/"+hostPlatform.arch)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("hack/xpkg.sh: %v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
		}
		return stdout.String()
	}
	a, b := t.TempDir(), t.TempDir()
	summary := build(a)
	build(b)

	// Every file the build writes is reproducible, and the summary gives
	// each one's checksum.
	built := []string{"function-firebolt-" + version + ".xpkg", "configuration-firebolt-" + version + ".xpkg", hostPlatform.archive(), "firebolt.yaml"}
	sums := make([]string, 0, len(built))
	for _, file := range built {
		da, db := digest(t, filepath.Join(a, file)), digest(t, filepath.Join(b, file))
		if da != db {
			t.Errorf("%s is not reproducible: %s != %s", file, da, db)
		}
		sums = append(sums, da+"  "+file)
	}
	if diff := cmp.Diff(sums, sumLines.FindAllString(summary, -1)); diff != "" {
		t.Errorf("hack/xpkg.sh's sha256sum summary (-want +got):\n%s", diff)
	}

	for _, pkg := range []string{"function-firebolt", "configuration-firebolt"} {
		file := pkg + "-" + version + ".xpkg"
		ref := reg + "/" + pkg + ":" + version
		if out, err := exec.CommandContext(t.Context(), crossplane, "xpkg", "push", "-f", filepath.Join(a, file), ref).CombinedOutput(); err != nil {
			t.Fatalf("crossplane xpkg push %s: %v\n%s", ref, err, out)
		}
	}

	t.Run("Function", func(t *testing.T) {
		img := pull(t, reg+"/function-firebolt:"+version)
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"/function"}, cfg.Config.Entrypoint); diff != "" {
			t.Errorf("entrypoint (-want +got):\n%s", diff)
		}
		if cfg.Config.User != "65532:65532" {
			t.Errorf("user = %q, want the non-root 65532:65532", cfg.Config.User)
		}
		files := flatten(t, img)
		if h, ok := files["function"]; !ok || h.mode&0o111 == 0 || h.uid != 65532 {
			t.Errorf("runtime layer lacks an executable /function owned by 65532: %+v", h)
		}
		// Built by exactly the toolchain go.mod pins, whatever Go ran the build.
		bi, err := buildinfo.Read(bytes.NewReader([]byte(files["function"].body)))
		if err != nil {
			t.Fatalf("cannot read the build info of /function: %v", err)
		}
		if want := pinnedToolchain(t, root); bi.GoVersion != want {
			t.Errorf("/function was built with %s, want %s (go.mod's toolchain line)", bi.GoVersion, want)
		}
		kinds := docKinds(t, files["package.yaml"].body)
		if diff := cmp.Diff([]string{"CustomResourceDefinition/inputs.firebolt.fn.crossplane.io", "Function/function-firebolt"}, kinds); diff != "" {
			t.Errorf("package.yaml objects (-want +got):\n%s", diff)
		}
	})

	t.Run("Configuration", func(t *testing.T) {
		files := flatten(t, pull(t, reg+"/configuration-firebolt:"+version))
		pkgYAML := files["package.yaml"].body
		kinds := docKinds(t, pkgYAML)
		want := []string{
			"CompositeResourceDefinition/xfireboltengineclasses.compute.firebolt.io",
			"CompositeResourceDefinition/xfireboltengines.compute.firebolt.io",
			"CompositeResourceDefinition/xfireboltinstances.compute.firebolt.io",
			"CompositeResourceDefinition/xphasedrollouts.sts.plus",
			"CompositeResourceDefinition/xphasedstatefulsets.apps.firebolt.io",
			"Composition/xfireboltengineclasses.compute.firebolt.io",
			"Composition/xfireboltengines.compute.firebolt.io",
			"Composition/xfireboltinstances.compute.firebolt.io",
			"Composition/xphasedrollouts.sts.plus",
			"Composition/xphasedstatefulsets.apps.firebolt.io",
			"Configuration/configuration-firebolt",
		}
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("package.yaml objects (-want +got):\n%s", diff)
		}
		// The dependency is on the registry the package was built for, and
		// every Composition calls the name Crossplane installs it under.
		if !strings.Contains(pkgYAML, "package: "+reg+"/function-firebolt") {
			t.Errorf("Configuration does not depend on %s/function-firebolt:\n%s", reg, pkgYAML)
		}
		// provider-kubernetes is published upstream, whatever the registry
		// the product is built for: a mirror is the cluster's business
		// (an ImageConfig's rewriteImage), never the package's.
		if !strings.Contains(pkgYAML, "package: xpkg.crossplane.io/crossplane-contrib/provider-kubernetes\n") {
			t.Errorf("Configuration does not depend on xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:\n%s", pkgYAML)
		}
		if n := strings.Count(pkgYAML, "kind: Provider\n") + strings.Count(pkgYAML, "kind: Function\n"); n != 2 {
			t.Errorf("Configuration has %d dependencies, want 2 (the function and provider-kubernetes):\n%s", n, pkgYAML)
		}
		if n, want := strings.Count(pkgYAML, "name: firebolt-db-function-firebolt"), len(v1alpha1.Composites); n != want {
			t.Errorf("%d Compositions reference firebolt-db-function-firebolt, want %d", n, want)
		}
	})

	t.Run("Plugin", func(t *testing.T) { checkPlugin(t, root, a) })
}

// pinnedToolchain is go.mod's toolchain line; the packages must not build
// without one.
func pinnedToolchain(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Toolchain == nil {
		t.Fatal("go.mod has no toolchain line: package builds would depend on the local Go")
	}
	return f.Toolchain.Name
}

func digest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func pull(t *testing.T, ref string) v1.Image {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatalf("cannot pull %s: %v", ref, err)
	}
	return img
}

type file struct {
	mode int64
	uid  int
	gid  int
	body string
}

// flatten reads every regular file of every layer.
func flatten(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]file{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		readTar(t, rc, files)
		_ = rc.Close()
	}
	return files
}

// readTar adds every regular file of a tar stream to files, by its path
// without a leading slash.
func readTar(t *testing.T, r io.Reader, files map[string]file) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(h.Name, "/")] = file{mode: h.Mode, uid: h.Uid, gid: h.Gid, body: string(b)}
	}
}

// docKinds lists Kind/name of each YAML document, sorted.
func docKinds(t *testing.T, stream string) []string {
	t.Helper()
	var out []string
	for _, doc := range strings.Split(stream, "\n---") {
		var o struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("cannot parse package.yaml document: %v", err)
		}
		if o.Kind != "" {
			out = append(out, o.Kind+"/"+o.Metadata.Name)
		}
	}
	sort.Strings(out)
	return out
}
