package packages

import (
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/internal/xptools"
)

// pluginPlatform is one platform the plugin is built for.
type pluginPlatform struct{ os, arch string }

func (p pluginPlatform) archive() string {
	return "kubectl-firebolt-" + version + "-" + p.os + "-" + p.arch + ".tar.gz"
}

// hostPlatform is the one platform make test builds the plugin for
// (PLUGIN_PLATFORMS): hack/krewpack's TestEveryPlatformTypeChecks checks the
// others, whose builds from an empty cache were the longest part of a cold
// CI run's tests.
var hostPlatform = pluginPlatform{runtime.GOOS, runtime.GOARCH}

// shippedPlatforms are the platforms a release builds the plugin for, as
// hack/xpkg.sh reads them from hack/krewpack.
func shippedPlatforms(t *testing.T, root string) []pluginPlatform {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "run", "./hack/krewpack", "-list")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./hack/krewpack -list: %v", err)
	}
	words := strings.Fields(string(out))
	ps := make([]pluginPlatform, 0, len(words))
	for _, w := range words {
		goos, goarch, ok := strings.Cut(w, "/")
		if !ok {
			t.Fatalf("hack/krewpack -list printed %q, not GOOS/GOARCH", w)
		}
		ps = append(ps, pluginPlatform{goos, goarch})
	}
	return ps
}

// releaseURL is where hack/xpkg.sh says the archives are downloaded from
// when PLUGIN_URL is unset.
const releaseURL = "https://github.com/firebolt-db/firebolt-crossplane/releases/download/" + version + "/"

// krewPlugin is what krew reads of the manifest to install.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version   string `json:"version"`
		Platforms []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// checkPlugin checks the plugin hack/xpkg.sh built into out: the krew
// manifest names every archive with its checksum; every archive holds a
// static binary for its platform, built by the pinned toolchain; the one
// for this machine runs and says the version it was stamped with.
func checkPlugin(t *testing.T, root, out string) {
	b, err := os.ReadFile(filepath.Join(out, "firebolt.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m krewPlugin
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("cannot parse firebolt.yaml: %v", err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "firebolt" || m.Spec.Version != version {
		t.Errorf("manifest: %s %s %s %s", m.APIVersion, m.Kind, m.Metadata.Name, m.Spec.Version)
	}
	if len(m.Spec.Platforms) != 1 {
		t.Fatalf("the manifest has %d platforms, want this machine's alone", len(m.Spec.Platforms))
	}
	toolchain := pinnedToolchain(t, root)
	for i, want := range []pluginPlatform{hostPlatform} {
		p := m.Spec.Platforms[i]
		if diff := cmp.Diff(map[string]string{"os": want.os, "arch": want.arch}, p.Selector.MatchLabels); diff != "" {
			t.Errorf("platform %d selector (-want +got):\n%s", i, diff)
		}
		if p.URI != releaseURL+want.archive() || p.Bin != "kubectl-firebolt" {
			t.Errorf("platform %s/%s: uri %s, bin %s", want.os, want.arch, p.URI, p.Bin)
		}
		if sum := digest(t, filepath.Join(out, want.archive())); p.SHA256 != sum {
			t.Errorf("%s: the manifest says sha256 %s, the archive's is %s", want.archive(), p.SHA256, sum)
		}
		bin := pluginBinary(t, filepath.Join(out, want.archive()))
		bi, err := buildinfo.Read(bytes.NewReader(bin))
		if err != nil {
			t.Fatalf("%s: cannot read the binary's build info: %v", want.archive(), err)
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		got := map[string]string{"GOOS": settings["GOOS"], "GOARCH": settings["GOARCH"], "CGO_ENABLED": settings["CGO_ENABLED"], "-trimpath": settings["-trimpath"], "go": bi.GoVersion}
		wantSettings := map[string]string{"GOOS": want.os, "GOARCH": want.arch, "CGO_ENABLED": "0", "-trimpath": "true", "go": toolchain}
		if diff := cmp.Diff(wantSettings, got); diff != "" {
			t.Errorf("%s build (-want +got):\n%s", want.archive(), diff)
		}
		// -trimpath leaves -ldflags out of the build info, so the stamped
		// version is seen by running the binary of this machine.
		if want.os != runtime.GOOS || want.arch != runtime.GOARCH {
			continue
		}
		exe := filepath.Join(t.TempDir(), "kubectl-firebolt")
		if err := os.WriteFile(exe, bin, 0o755); err != nil {
			t.Fatal(err)
		}
		v, err := exec.CommandContext(t.Context(), exe, "version").CombinedOutput()
		if err != nil || string(v) != "kubectl-firebolt "+version+"\n" {
			t.Errorf("kubectl-firebolt version: %q, %v", v, err)
		}
	}
}

// pluginBinary is the executable kubectl-firebolt of an archive, which
// holds nothing else but a LICENSE.
func pluginBinary(t *testing.T, archive string) []byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]file{}
	readTar(t, gz, files)
	bin, ok := files["kubectl-firebolt"]
	if !ok {
		t.Fatalf("%s holds no kubectl-firebolt", archive)
	}
	if bin.mode != 0o755 || bin.uid != 0 || bin.gid != 0 {
		t.Errorf("%s: kubectl-firebolt mode %o, owner %d:%d; want 755, 0:0", archive, bin.mode, bin.uid, bin.gid)
	}
	for name := range files {
		if name != "kubectl-firebolt" && name != "LICENSE" {
			t.Errorf("%s holds %s", archive, name)
		}
	}
	return []byte(bin.body)
}

// TestPluginAPIGroups: the plugin compiles core/v1 and apps/v1 of
// k8s.io/api and no other group. client-go's typed clients would bring
// kubernetes/scheme, which registers every group, and each krew platform's
// cross-build would compile all of them again (kubectlfirebolt.restCore).
func TestPluginAPIGroups(t *testing.T) {
	root := xptools.Root()
	for _, p := range shippedPlatforms(t, root) {
		cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", "./cmd/kubectl-firebolt")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+p.os, "GOARCH="+p.arch, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./cmd/kubectl-firebolt for %s/%s: %v", p.os, p.arch, err)
		}
		var groups []string
		for _, pkg := range strings.Fields(string(out)) {
			if pkg == "k8s.io/client-go/kubernetes/scheme" || strings.HasPrefix(pkg, "k8s.io/api/") {
				groups = append(groups, pkg)
			}
		}
		sort.Strings(groups)
		if diff := cmp.Diff([]string{"k8s.io/api/apps/v1", "k8s.io/api/core/v1"}, groups); diff != "" {
			t.Errorf("%s/%s: the plugin's API packages (-want +got):\n%s", p.os, p.arch, diff)
		}
	}
}
