package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// bins writes a stand-in binary per platform.
func bins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range Platforms {
		d := filepath.Join(dir, p.OS+"-"+p.Arch)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, Binary), []byte("binary for "+p.OS+"/"+p.Arch), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// manifest is the part of a krew manifest krew reads to install.
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

type entry struct {
	Name  string
	Mode  int64
	UID   int
	GID   int
	Time  string
	Body  string
	Owner string
}

func untar(t *testing.T, b []byte) []entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header carries name %q, time %s", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{h.Name, h.Mode, h.Uid, h.Gid, h.ModTime.UTC().Format("2006-01-02"), string(body), h.Uname + h.Gname})
	}
}

// TestPack: every platform's archive holds the binary (and the license)
// with fixed metadata, packing twice writes the same bytes, and the
// manifest names each archive with its checksum.
func TestPack(t *testing.T) {
	in := bins(t)
	license := filepath.Join(t.TempDir(), "LICENSE")
	if err := os.WriteFile(license, []byte("Apache-2.0"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	for _, out := range []string{a, b} {
		files, err := Pack(Options{Version: "v1.2.3", URL: "https://example.com/dl/v1.2.3/", Bins: in, Out: out, License: license})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"kubectl-firebolt-v1.2.3-linux-amd64.tar.gz", "kubectl-firebolt-v1.2.3-linux-arm64.tar.gz",
			"kubectl-firebolt-v1.2.3-darwin-amd64.tar.gz", "kubectl-firebolt-v1.2.3-darwin-arm64.tar.gz", "firebolt.yaml",
		}
		if diff := cmp.Diff(want, files); diff != "" {
			t.Fatalf("files (-want +got):\n%s", diff)
		}
	}
	mb, err := os.ReadFile(filepath.Join(a, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.UnmarshalStrict(mb, &m); err != nil {
		t.Fatalf("the manifest is not the krew shape: %v\n%s", err, mb)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "firebolt" || m.Spec.Version != "v1.2.3" {
		t.Errorf("manifest head: %+v", m)
	}
	if m.Spec.ShortDescription == "" || m.Spec.Description == "" || m.Spec.Homepage == "" {
		t.Errorf("manifest lacks a description or homepage: %+v", m.Spec)
	}
	if len(m.Spec.Platforms) != len(Platforms) {
		t.Fatalf("%d platforms, want %d", len(m.Spec.Platforms), len(Platforms))
	}
	for i, p := range m.Spec.Platforms {
		want := Platforms[i]
		name := want.Archive("v1.2.3")
		if diff := cmp.Diff(map[string]string{"os": want.OS, "arch": want.Arch}, p.Selector.MatchLabels); diff != "" {
			t.Errorf("platform %d selector (-want +got):\n%s", i, diff)
		}
		if p.URI != "https://example.com/dl/v1.2.3/"+name || p.Bin != Binary {
			t.Errorf("platform %d: uri %s bin %s", i, p.URI, p.Bin)
		}
		ba, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		bb, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ba, bb) {
			t.Errorf("%s differs between two packs", name)
		}
		sum := sha256.Sum256(ba)
		if p.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: manifest sha256 %s, archive %x", name, p.SHA256, sum)
		}
		wantEntries := []entry{
			{Name: Binary, Mode: 0o755, Time: "2000-01-01", Body: "binary for " + want.OS + "/" + want.Arch},
			{Name: "LICENSE", Mode: 0o644, Time: "2000-01-01", Body: "Apache-2.0"},
		}
		if diff := cmp.Diff(wantEntries, untar(t, ba)); diff != "" {
			t.Errorf("%s entries (-want +got):\n%s", name, diff)
		}
		var files []string
		for _, f := range p.Files {
			files = append(files, f.From+"->"+f.To)
		}
		if diff := cmp.Diff([]string{"kubectl-firebolt->.", "LICENSE->."}, files); diff != "" {
			t.Errorf("platform %d files (-want +got):\n%s", i, diff)
		}
	}
	mb2, err := os.ReadFile(filepath.Join(b, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mb, mb2) {
		t.Error("the manifest differs between two packs")
	}
}

// TestPackWithoutLicense: no LICENSE, no LICENSE entry or file line.
func TestPackWithoutLicense(t *testing.T) {
	out := t.TempDir()
	if _, err := Pack(Options{Version: "v0.1.0", URL: "file:///tmp/dl", Bins: bins(t), Out: out}); err != nil {
		t.Fatal(err)
	}
	ba, err := os.ReadFile(filepath.Join(out, "kubectl-firebolt-v0.1.0-linux-arm64.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if es := untar(t, ba); len(es) != 1 || es[0].Name != Binary {
		t.Errorf("entries %+v, want the binary alone", es)
	}
	mb, err := os.ReadFile(filepath.Join(out, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mb), "LICENSE") {
		t.Errorf("the manifest names a LICENSE:\n%s", mb)
	}
}

func TestPackRefuses(t *testing.T) {
	cases := map[string]struct {
		o    Options
		want string
	}{
		"Version":   {Options{Version: "1.0", URL: "https://x"}, `-version "1.0": krew needs a semantic version such as v0.1.0`},
		"URL":       {Options{Version: "v1.0.0", URL: "ftp://x"}, `-url "ftp://x": must be an http(s):// or file:// URL`},
		"NoBinary":  {Options{Version: "v1.0.0", URL: "https://x", Bins: "/nonexistent"}, "cannot read the linux/amd64 binary"},
		"NoLicense": {Options{Version: "v1.0.0", URL: "https://x", License: "/nonexistent/LICENSE"}, "cannot read the license"},
		"UnknownPlatform": {Options{Version: "v1.0.0", URL: "https://x", Bins: "/nonexistent", Only: []string{"linux/amd64", "windows/amd64"}},
			`-platforms: "windows/amd64" is not a platform the plugin ships for (linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.o.Out = t.TempDir()
			_, err := Pack(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestPackOnly: a pack of some platforms holds their archives alone, in the
// shipped order whatever order they were named in, and the manifest names
// only them; a binary of a platform not named is not needed.
func TestPackOnly(t *testing.T) {
	in := bins(t)
	if err := os.RemoveAll(filepath.Join(in, "linux-arm64")); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	files, err := Pack(Options{Version: "v0.1.0", URL: "https://example.com/dl", Bins: in, Out: out, Only: []string{"darwin/arm64", "linux/amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"kubectl-firebolt-v0.1.0-linux-amd64.tar.gz", "kubectl-firebolt-v0.1.0-darwin-arm64.tar.gz", "firebolt.yaml"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	mb, err := os.ReadFile(filepath.Join(out, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.UnmarshalStrict(mb, &m); err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(m.Spec.Platforms))
	for _, p := range m.Spec.Platforms {
		got = append(got, p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"])
	}
	if diff := cmp.Diff([]string{"linux/amd64", "darwin/arm64"}, got); diff != "" {
		t.Errorf("manifest platforms (-want +got):\n%s", diff)
	}
}
