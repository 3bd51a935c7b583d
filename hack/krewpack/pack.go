package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"time"

	_ "embed"
)

// Binary is the plugin's executable: kubectl runs kubectl-firebolt for
// `kubectl firebolt`.
const Binary = "kubectl-firebolt"

// Platforms are the platforms packed, as GOOS/GOARCH and krew's os/arch
// selector labels (the same words).
var Platforms = []Platform{
	{OS: "linux", Arch: "amd64"},
	{OS: "linux", Arch: "arm64"},
	{OS: "darwin", Arch: "amd64"},
	{OS: "darwin", Arch: "arm64"},
}

// Platform is one packed platform and, once packed, its archive.
type Platform struct {
	OS, Arch    string
	URI, SHA256 string
}

// Archive is the platform's archive file name.
func (p Platform) Archive(version string) string {
	return fmt.Sprintf("%s-%s-%s-%s.tar.gz", Binary, version, p.OS, p.Arch)
}

// Options say what to pack and where. Only, when set, packs those of the
// Platforms alone (as GOOS/GOARCH), in their order: a build for this machine
// alone, as the package test makes. A release packs them all.
type Options struct {
	Version, URL, Bins, Out, License string
	Only                             []string
}

// String is the platform as GOOS/GOARCH.
func (p Platform) String() string { return p.OS + "/" + p.Arch }

// selected are the Platforms o.Only names, or all of them; a name that is
// not one of them is refused rather than packed into a manifest krew could
// not match.
func (o Options) selected() ([]Platform, error) {
	if len(o.Only) == 0 {
		return Platforms, nil
	}
	want := make(map[string]bool, len(o.Only))
	for _, name := range o.Only {
		known := false
		for _, p := range Platforms {
			known = known || p.String() == name
		}
		if !known {
			return nil, fmt.Errorf("-platforms: %q is not a platform the plugin ships for (%s)", name, platformList(Platforms))
		}
		want[name] = true
	}
	var out []Platform
	for _, p := range Platforms {
		if want[p.String()] {
			out = append(out, p)
		}
	}
	return out, nil
}

// platformList is platforms as GOOS/GOARCH words, space-separated, as
// hack/xpkg.sh loops over them.
func platformList(platforms []Platform) string {
	words := make([]string, 0, len(platforms))
	for _, p := range platforms {
		words = append(words, p.String())
	}
	return strings.Join(words, " ")
}

// archiveTime is every archive entry's modification time: fixed, so two
// builds of the same sources pack the same bytes.
var archiveTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// semver is the version form krew accepts.
var semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

//go:embed firebolt.yaml.tmpl
var manifestTemplate string

// ManifestName is the krew manifest's file name: the plugin's name.
const ManifestName = "firebolt.yaml"

// Pack writes one archive per platform and the manifest into o.Out, and
// returns the files written, manifest last.
func Pack(o Options) ([]string, error) {
	if !semver.MatchString(o.Version) {
		return nil, fmt.Errorf("-version %q: krew needs a semantic version such as v0.1.0", o.Version)
	}
	if !strings.HasPrefix(o.URL, "https://") && !strings.HasPrefix(o.URL, "http://") && !strings.HasPrefix(o.URL, "file://") {
		return nil, fmt.Errorf("-url %q: must be an http(s):// or file:// URL", o.URL)
	}
	var license []byte
	if o.License != "" {
		b, err := os.ReadFile(o.License)
		if err != nil {
			return nil, fmt.Errorf("cannot read the license: %w", err)
		}
		license = b
	}
	selected, err := o.selected()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	platforms := make([]Platform, 0, len(selected))
	files := make([]string, 0, len(selected)+1)
	for _, p := range selected {
		bin, err := os.ReadFile(filepath.Join(o.Bins, p.OS+"-"+p.Arch, Binary))
		if err != nil {
			return nil, fmt.Errorf("cannot read the %s/%s binary: %w", p.OS, p.Arch, err)
		}
		archive, err := pack(bin, license)
		if err != nil {
			return nil, fmt.Errorf("cannot pack the %s/%s binary: %w", p.OS, p.Arch, err)
		}
		name := p.Archive(o.Version)
		if err := os.WriteFile(filepath.Join(o.Out, name), archive, 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(archive)
		p.URI, p.SHA256 = strings.TrimSuffix(o.URL, "/")+"/"+name, hex.EncodeToString(sum[:])
		platforms = append(platforms, p)
		files = append(files, name)
	}
	manifest, err := Manifest(o.Version, platforms, license != nil)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Out, ManifestName), manifest, 0o644); err != nil {
		return nil, err
	}
	return append(files, ManifestName), nil
}

// Manifest renders the krew manifest for packed platforms.
func Manifest(version string, platforms []Platform, license bool) ([]byte, error) {
	t, err := template.New(ManifestName).Option("missingkey=error").Parse(manifestTemplate)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, map[string]any{"Version": version, "Platforms": platforms, "Binary": Binary, "License": license})
	return b.Bytes(), err
}

// pack is a gzipped tar of the binary (and the license, when there is
// one) with fixed times, owners and modes, and no gzip name or time.
func pack(bin, license []byte) ([]byte, error) {
	var b bytes.Buffer
	gz, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	type entry struct {
		name string
		mode int64
		body []byte
	}
	entries := []entry{{Binary, 0o755, bin}}
	if license != nil {
		entries = append(entries, entry{"LICENSE", 0o644, license})
	}
	for _, e := range entries {
		h := &tar.Header{
			Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: int64(len(e.body)),
			ModTime: archiveTime, Format: tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
