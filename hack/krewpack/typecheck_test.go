package main

import (
	"os"
	"testing"

	"golang.org/x/tools/go/packages"
)

// pluginMain is the plugin's main package, the one hack/xpkg.sh builds.
const pluginMain = "github.com/firebolt-db/firebolt-crossplane/cmd/kubectl-firebolt"

// TestEveryPlatformTypeChecks type-checks the plugin, with every package it
// imports and their function bodies, from source as Go selects it for each
// shipped platform. The package test builds and packs the plugin for this
// machine alone (make test): from an empty build cache each foreign build
// was about 150 CPU-s, and what differs between platforms is which files
// their build constraints select, which type-checking each platform's set
// sees. make xpkg builds them all.
func TestEveryPlatformTypeChecks(t *testing.T) {
	for _, p := range Platforms {
		t.Run(p.OS+"-"+p.Arch, func(t *testing.T) {
			t.Parallel()
			cfg := &packages.Config{
				Context: t.Context(),
				Mode:    packages.NeedName | packages.NeedImports | packages.NeedDeps | packages.NeedSyntax | packages.NeedTypes,
				Env:     append(os.Environ(), "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0"),
			}
			roots, err := packages.Load(cfg, pluginMain)
			if err != nil {
				t.Fatalf("cannot load %s for %s: %v", pluginMain, p, err)
			}
			checked := 0
			packages.Visit(roots, nil, func(pkg *packages.Package) {
				checked++
				for _, e := range pkg.Errors {
					t.Errorf("%s for %s: %v", pkg.PkgPath, p, e)
				}
				if pkg.Types == nil || !pkg.Types.Complete() {
					t.Errorf("%s for %s was not type-checked", pkg.PkgPath, p)
				}
			})
			if len(roots) != 1 || roots[0].Name != "main" || checked < 2 {
				t.Errorf("loaded %d roots and %d packages for %s; want the plugin's main and what it imports", len(roots), checked, p)
			}
		})
	}
}
