// Command pkgstage writes every file that depends on the package registry
// path (Configuration meta, Compositions' functionRef, the ImageConfig) and,
// with -stage, assembles the Configuration package root.
//
//	pkgstage -registry ghcr.io/firebolt-db -version v0.1.0 -root .            # regenerate committed files
//	pkgstage -registry 127.0.0.1:5000/firebolt-db -version v0.1.0 -stage DIR # package root for xpkg build
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	p := Packages{}
	flag.StringVar(&p.Registry, "registry", "", "registry path the packages are pushed to (the Makefile's REGISTRY)")
	flag.StringVar(&p.Version, "version", "", "package version (the Makefile's VERSION)")
	root := flag.String("root", "", "write the generated files into this repository root")
	stage := flag.String("stage", "", "assemble the Configuration package root in this (new) directory")
	xrds := flag.String("xrds", "apis/definitions", "directory holding the generated XRDs (with -stage)")
	flag.Parse()
	if err := run(p, *root, *stage, *xrds); err != nil {
		fmt.Fprintln(os.Stderr, "pkgstage:", err)
		os.Exit(1)
	}
}

func run(p Packages, root, stage, xrds string) error {
	files, err := Files(p)
	if err != nil {
		return err
	}
	switch {
	case root != "":
		return write(root, files)
	case stage != "":
		pkg := map[string][]byte{}
		for path, b := range files {
			if path == "crossplane.yaml" || filepath.Dir(path) == "composition" {
				pkg[path] = b
			}
		}
		defs, err := filepath.Glob(filepath.Join(xrds, "*.yaml"))
		if err != nil || len(defs) == 0 {
			return fmt.Errorf("no XRDs in %s (run make generate)", xrds)
		}
		for _, d := range defs {
			b, err := os.ReadFile(d)
			if err != nil {
				return err
			}
			pkg["apis/"+filepath.Base(d)] = b
		}
		return write(stage, pkg)
	default:
		return fmt.Errorf("one of -root or -stage is required")
	}
}

func write(dir string, files map[string][]byte) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}
