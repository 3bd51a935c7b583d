package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/internal/xptools"
)

// EnvTools carries the prepared Tools, as JSON, to the re-executed copy:
// the network namespace has no route to the Go module proxy, so everything
// is built before entering it.
const EnvTools = "FIREBOLT_E2E_TOOLS"

// Where the product is published inside the namespace. The registry runs in
// the harness on a fixed loopback port: the namespace is private, so nothing
// else can hold it. The Configuration's dependency names this path, so the
// packages are built for it.
const (
	RegistryAddr   = "127.0.0.1:5000"
	Registry       = RegistryAddr + "/firebolt-db"
	PackageVersion = "v0.1.0"
)

// Tools is everything the harness runs, built once into the tools cache by
// hack/tools.sh (a warm machine skips that), plus the product built from
// this tree on every run.
type Tools struct {
	Root string `json:"root"`

	Etcd                  string `json:"etcd"`
	KubeAPIServer         string `json:"kubeAPIServer"`
	KubeControllerManager string `json:"kubeControllerManager"`
	KubeScheduler         string `json:"kubeScheduler"`
	KWOK                  string `json:"kwok"`
	KWOKStages            string `json:"kwokStages"`
	// Prometheus is the server phased-rollout checks query.
	Prometheus     string `json:"prometheus"`
	Crossplane     string `json:"crossplane"`
	CrossplaneCore string `json:"crossplaneCore"`
	// CrossplaneModule is the pinned core module's directory: its CRDs and
	// webhook configurations are what `crossplane core init` installs.
	CrossplaneModule string `json:"crossplaneModule"`

	// ProviderKubernetes is provider-kubernetes's provider binary, and
	// ProviderKubernetesCRDs its module's package/crds.
	ProviderKubernetes     string `json:"providerKubernetes"`
	ProviderKubernetesCRDs string `json:"providerKubernetesCRDs"`

	// CertManager runs cert-manager's controllers (hack/tools/cert-manager-kwok),
	// and CertManagerCRDs is its module's deploy/crds.
	CertManager     string `json:"certManager"`
	CertManagerCRDs string `json:"certManagerCRDs"`

	Function             string `json:"function"`
	FunctionPackage      string `json:"functionPackage"`
	ConfigurationPackage string `json:"configurationPackage"`
	// ProviderKubernetesPackage is provider-kubernetes's package, built
	// from its module's package/ (no runtime image: the harness runs the
	// binary itself).
	ProviderKubernetesPackage string `json:"providerKubernetesPackage"`
}

// Root is the repository root (xptools.Root).
func Root() string { return xptools.Root() }

// Prepare builds what is missing into the tools cache, then the function,
// both packages and provider-kubernetes's package into out. Progress goes to
// log.
func Prepare(ctx context.Context, out string, log io.Writer) (*Tools, error) {
	root := Root()
	t := &Tools{Root: root}
	tools := []struct {
		name string
		into *string
	}{
		// The slowest first, so a cold machine reports its long step early.
		{"kube-apiserver", &t.KubeAPIServer},
		{"kube-controller-manager", &t.KubeControllerManager},
		{"kube-scheduler", &t.KubeScheduler},
		{"crossplane-core", &t.CrossplaneCore},
		{"crossplane", &t.Crossplane},
		{"crossplane-module", &t.CrossplaneModule},
		{"etcd", &t.Etcd},
		{"kwok", &t.KWOK},
		{"kwok-stages", &t.KWOKStages},
		{"prometheus", &t.Prometheus},
		{"provider-kubernetes", &t.ProviderKubernetes},
		{"provider-kubernetes-crds", &t.ProviderKubernetesCRDs},
		{"cert-manager", &t.CertManager},
		{"cert-manager-crds", &t.CertManagerCRDs},
	}
	for _, tool := range tools {
		start := time.Now()
		p, err := toolPath(ctx, root, tool.name, log)
		if err != nil {
			return nil, err
		}
		if d := time.Since(start); d > 2*time.Second {
			_, _ = fmt.Fprintf(log, "harness: built %s in %s\n", tool.name, d.Round(time.Second))
		}
		*tool.into = p
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, errors.Wrapf(err, "cannot create %s", out)
	}
	start := time.Now()
	t.Function = filepath.Join(out, "function")
	if _, err := runOnce(ctx, root, nil, "go", "build", "-o", t.Function, "./cmd/function"); err != nil {
		return nil, errors.Wrap(err, "cannot build the function")
	}
	pkgs := filepath.Join(out, "xpkg")
	// The packages only: the stack installs nothing else, and the plugin's
	// cross-builds are test/packages' to check.
	if _, err := runOnce(ctx, root, []string{"REGISTRY=" + Registry, "VERSION=" + PackageVersion, "CROSSPLANE=" + t.Crossplane, "PACKAGES_ONLY=1"},
		filepath.Join(root, "hack", "xpkg.sh"), pkgs); err != nil {
		return nil, errors.Wrap(err, "cannot build the packages")
	}
	t.FunctionPackage = filepath.Join(pkgs, "function-firebolt-"+PackageVersion+".xpkg")
	t.ConfigurationPackage = filepath.Join(pkgs, "configuration-firebolt-"+PackageVersion+".xpkg")
	_, _ = fmt.Fprintf(log, "harness: built the function and both packages in %s\n", time.Since(start).Round(time.Second))
	start = time.Now()
	provider, err := buildProviderPackage(ctx, t, pkgs)
	if err != nil {
		return nil, err
	}
	t.ProviderKubernetesPackage = provider
	_, _ = fmt.Fprintf(log, "harness: built the provider-kubernetes package in %s\n", time.Since(start).Round(time.Millisecond))
	return t, nil
}

// buildProviderPackage builds provider-kubernetes's package from its
// module's package/ (crossplane.yaml and the CRDs) with the pinned CLI, as
// its own release builds it, without a runtime image.
func buildProviderPackage(ctx context.Context, t *Tools, out string) (string, error) {
	root := filepath.Dir(t.ProviderKubernetesCRDs)
	if !strings.Contains(root, "/provider-kubernetes@"+ProviderKubernetesVersion+"/") {
		return "", errors.Errorf("hack/tools.sh provider-kubernetes-crds printed %s, not provider-kubernetes %s's", t.ProviderKubernetesCRDs, ProviderKubernetesVersion)
	}
	examples := filepath.Join(out, ".no-examples")
	if err := os.MkdirAll(examples, 0o755); err != nil {
		return "", errors.Wrapf(err, "cannot create %s", examples)
	}
	file := filepath.Join(out, "provider-kubernetes-"+ProviderKubernetesVersion+".xpkg")
	if _, err := runOnce(ctx, out, nil, t.Crossplane, "xpkg", "build", "--package-root="+root, "--examples-root="+examples, "-o", file); err != nil {
		return "", errors.Wrap(err, "cannot build the provider-kubernetes package")
	}
	return file, nil
}

// toolPath runs hack/tools.sh, which builds the tool on first use and prints
// its path.
func toolPath(ctx context.Context, root, name string, log io.Writer) (string, error) {
	cmd := commandContext(ctx, filepath.Join(root, "hack", "tools.sh"), name)
	cmd.Dir = root
	cmd.Stderr = log
	out, err := cmd.Output()
	if err != nil {
		return "", errors.Wrapf(err, "cannot build %s with hack/tools.sh", name)
	}
	return strings.TrimSpace(string(out)), nil
}

// Tool builds the named tool with hack/tools.sh if the tools cache lacks it
// and returns its path: what the end-to-end stack does not run itself, such
// as the kubectl make up gives its user.
func Tool(ctx context.Context, name string, log io.Writer) (string, error) {
	return toolPath(ctx, Root(), name, log)
}

// Encode serialises the tools for EnvTools.
func (t *Tools) Encode() string {
	b, _ := json.Marshal(t) //nolint:errchkjson // Strings only: encoding cannot fail.
	return string(b)
}

// DecodeTools reads the tools the parent prepared.
func DecodeTools(s string) (*Tools, error) {
	t := &Tools{}
	if err := json.Unmarshal([]byte(s), t); err != nil {
		return nil, errors.Wrapf(err, "cannot decode %s", EnvTools)
	}
	return t, nil
}

// CrossplaneCRDs is the directory of Crossplane's own CRDs.
func (t *Tools) CrossplaneCRDs() string {
	return filepath.Join(t.CrossplaneModule, "cluster", "crds")
}

// CrossplaneWebhookConfigurations is the directory of Crossplane's webhook
// configurations (the Usage protection webhook).
func (t *Tools) CrossplaneWebhookConfigurations() string {
	return filepath.Join(t.CrossplaneModule, "cluster", "webhookconfigurations")
}
