// Command imagebuild writes the function's runtime OCI image as a
// docker-save style tarball, the form `crossplane xpkg build
// --embed-runtime-image-tarball` reads. It needs no Docker engine and its
// output is byte-for-byte reproducible: fixed timestamps, fixed ownership,
// one layer.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRoot is the distroless "nonroot" user; Crossplane's runtime also runs
// functions as non-root, so the image must not depend on root.
const nonRoot = 65532

func main() {
	binary := flag.String("binary", "", "static function binary to put at /function")
	out := flag.String("o", "", "output image tarball")
	tag := flag.String("tag", "runtime:amd64", "image reference recorded in the tarball")
	arch := flag.String("arch", "amd64", "image architecture")
	flag.Parse()
	if *binary == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: imagebuild -binary FILE -o IMAGE.tar [-tag REF] [-arch ARCH]")
		os.Exit(2)
	}
	if err := build(*binary, *out, *tag, *arch); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func build(binary, out, tag, arch string) error {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("cannot read binary: %w", err)
	}
	layerTar, err := rootfs(bin)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return fmt.Errorf("cannot create layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return fmt.Errorf("cannot append layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("cannot read image config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS = "linux"
	cfg.Architecture = arch
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cfg.Config.Entrypoint = []string{"/function"}
	cfg.Config.User = fmt.Sprintf("%d:%d", nonRoot, nonRoot)
	cfg.Config.ExposedPorts = map[string]struct{}{"9443/tcp": {}}
	cfg.Config.Env = []string{"PATH=/"}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return fmt.Errorf("cannot set image config: %w", err)
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("invalid tag %q: %w", tag, err)
	}
	return tarball.WriteToFile(out, ref, img)
}

// rootfs is the image's only layer: the binary and a writable /tmp.
func rootfs(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	entries := []struct {
		hdr  tar.Header
		body []byte
	}{
		{tar.Header{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777, ModTime: epoch}, nil},
		{tar.Header{Typeflag: tar.TypeReg, Name: "function", Mode: 0o755, Uid: nonRoot, Gid: nonRoot,
			Size: int64(len(bin)), ModTime: epoch}, bin},
	}
	for _, e := range entries {
		e.hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(&e.hdr); err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", e.hdr.Name, err)
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", e.hdr.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("cannot close layer: %w", err)
	}
	return buf.Bytes(), nil
}
