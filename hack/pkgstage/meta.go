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

// The provider-kubernetes package the Configuration depends on: PhasedRollout
// composes its Object (kubernetes.crossplane.io/v1alpha2), which v0.17.1
// (the newest release that builds from the Go module proxy, so the one the
// end-to-end stack runs) and every v1.x (what clusters run) serve alike.
const (
	ProviderKubernetesPackage = "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes"
	// ProviderKubernetesConstraint admits v0.17.1 up to, not including,
	// v2.0.0, and no pre-release: with Masterminds semver (Crossplane's
	// resolver's), a bound with a pre-release such as <v2.0.0-0 opts the
	// whole range into pre-releases (v1.1.0-rc.1 would match), while
	// <v2.0.0 keeps every pre-release out, v2.0.0-rc.1 included. Crossplane
	// installs the highest version the constraint admits that the registry
	// tags.
	ProviderKubernetesConstraint = ">=v0.17.1, <v2.0.0"
	// ProviderKubernetesRuntimeConfig names the DeploymentRuntimeConfig in
	// deploy/provider-kubernetes.yaml, which the generated ImageConfig
	// applies to the provider.
	ProviderKubernetesRuntimeConfig = "provider-kubernetes"
)

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
