package main

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xpkg"
)

// Packages names the two packages built from one registry path.
type Packages struct {
	Registry string // e.g. ghcr.io/firebolt-db
	Version  string // e.g. v0.1.0
}

// FunctionPackage is the Function package's repository.
func (p Packages) FunctionPackage() string { return p.Registry + "/function-firebolt" }

// ConfigurationPackage is the Configuration package's repository.
func (p Packages) ConfigurationPackage() string { return p.Registry + "/configuration-firebolt" }

// FunctionName is the name Crossplane gives the Function when it installs it
// as a dependency of the Configuration: the DNS label of the repository path
// without the registry host. Compositions must reference exactly this name.
func (p Packages) FunctionName() (string, error) {
	repo, err := name.NewRepository(p.FunctionPackage())
	if err != nil {
		return "", fmt.Errorf("invalid registry path %q: %w", p.Registry, err)
	}
	return xpkg.ToDNSLabel(repo.RepositoryStr()), nil
}

// FunctionConstraint is the range of Function versions the Configuration
// accepts: this version up to, not including, the next one that may break the
// function input or the status it keeps (the next major, or the next minor
// while the major is 0). Crossplane would otherwise upgrade a dependency
// across a breaking release on its own.
func (p Packages) FunctionConstraint() (string, error) {
	v, err := semver.StrictNewVersion(strings.TrimPrefix(p.Version, "v"))
	if err != nil {
		return "", fmt.Errorf("version %q must be a semantic version such as v1.2.3: %w", p.Version, err)
	}
	next := v.IncMajor()
	if v.Major() == 0 {
		next = v.IncMinor()
	}
	return fmt.Sprintf(">=%s, <v%s-0", p.Version, next.String()), nil
}

// Validate rejects a registry path or version that cannot name a package.
func (p Packages) Validate() error {
	if p.Registry == "" || strings.HasSuffix(p.Registry, "/") || strings.Contains(p.Registry, ":v") {
		return fmt.Errorf("registry %q must be a repository path without tag, e.g. ghcr.io/firebolt-db", p.Registry)
	}
	if !strings.HasPrefix(p.Version, "v") {
		return fmt.Errorf("version %q must be a semantic version starting with v", p.Version)
	}
	if _, err := p.FunctionConstraint(); err != nil {
		return err
	}
	_, err := p.FunctionName()
	return err
}
