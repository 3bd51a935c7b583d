package render

import (
	"errors"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firebolt-db/firebolt-crossplane/internal/xptools"
)

// schemas is the extensions argument of crossplane resource validate: our
// XRDs, the function's input CRD (so each Composition step's input is
// checked), Crossplane's own CRDs (Compositions, Functions, Usages, runtime
// configs) and provider-kubernetes's (the ProviderConfig in deploy/, the
// Objects PhasedRollout composes) and cert-manager's (the signing keys'
// Certificates an instance composes) and the Prometheus Operator's (the
// monitoring kit in deploy/monitoring). Native kinds need nothing.
func schemas(t *testing.T) string {
	root := xptools.Root()
	return strings.Join([]string{
		filepath.Join(root, "apis", "definitions"),
		filepath.Join(root, "package", "input"),
		xptools.CrossplaneCRDs(t),
		xptools.ProviderKubernetesCRDs(t),
		xptools.CertManagerCRDs(t),
		xptools.PrometheusOperatorCRDs(t),
	}, ",")
}

// validateOutput runs crossplane resource validate offline and returns its
// output and whether it passed. Missing schemas count as failures.
func validateOutput(t *testing.T, root, crossplane, extensions, resources string) (string, bool) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), crossplane, "resource", "validate", "--crossplane-image=",
		"--cache-dir="+t.TempDir(), "--error-on-missing-schemas", extensions, resources)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		if exitErr := (*exec.ExitError)(nil); !errors.As(err, &exitErr) {
			t.Fatalf("cannot run crossplane resource validate: %v", err)
		}
	}
	return string(out), err == nil
}

func validate(t *testing.T, root, crossplane, extensions, resources string) {
	t.Helper()
	if out, ok := validateOutput(t, root, crossplane, extensions, resources); !ok {
		t.Errorf("crossplane resource validate %s failed:\n%s", resources, out)
	}
}

// TestValidateManifests validates everything a user applies or installs:
// the example claims, the XRDs and Compositions of the Configuration
// package, the manifests shipped beside it, and the render Function.
func TestValidateManifests(t *testing.T) {
	root := xptools.Root()
	// apis/testdata/original-shapes holds claims that set the same fields as
	// the original operator's examples (its engine class with auto-stop
	// among them).
	// examples/phased/sample is a kustomization (the seed's samples):
	// its kustomization files are kubectl's, not objects to validate.
	var phased []string
	err := filepath.WalkDir(filepath.Join(root, "examples", "phased"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "kustomization.yaml" || filepath.Ext(p) != ".yaml" {
			return err
		}
		rel, err := filepath.Rel(root, p)
		phased = append(phased, rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	resources := strings.Join(append([]string{"examples/claims", "apis/definitions", "composition", "deploy", "examples/functions.yaml", "apis/testdata/original-shapes"}, phased...), ",")
	validate(t, root, xptools.Crossplane(t), schemas(t), resources)
}

// TestValidateRejectsBrokenExamples shows that validation is not a rubber
// stamp: each deliberately broken claim fails with a message that names
// the field and the rule.
func TestValidateRejectsBrokenExamples(t *testing.T) {
	root := xptools.Root()
	crossplane := xptools.Crossplane(t)
	cases := map[string]struct {
		file string
		want []string
	}{
		"WrongFieldType": {
			file: "wrong-field-type.yaml",
			want: []string{"spec.replicas", "Invalid value", "integer"},
		},
		"UnknownField": {
			file: "unknown-field.yaml",
			want: []string{"spec.replica", "unknown field"},
		},
		"ForbiddenTemplatePath": {
			file: "forbidden-template-path.yaml",
			want: []string{"terminationGracePeriodSeconds"},
		},
		"EngineTLSWithoutIssuer": {
			file: "engine-tls-without-issuer.yaml",
			want: []string{"spec.tls.engine.certManager", "required when enabled is true"},
		},
		"AuthWithoutLocal": {
			file: "auth-without-local.yaml",
			want: []string{"spec.auth.local is required when spec.auth.enabled is true"},
		},
		"PhasedOnDelete": {
			file: "phased-ondelete.yaml",
			want: []string{"spec.statefulSet.spec.updateStrategy.type must be RollingUpdate"},
		},
		"PhasedPartitionSet": {
			file: "phased-partition-set.yaml",
			want: []string{"partition is set by the phased rollout"},
		},
		"PhasedPrivileged": {
			file: "phased-privileged.yaml",
			want: []string{"spec.statefulSet.spec.template.spec.hostNetwork must not be set", "privileged"},
		},
		"PhasedURLWithCredentials": {
			file: "phased-url-credentials.yaml",
			want: []string{"spec.check.query.url", "must not carry credentials"},
		},
		"PhasedURLNotHTTP": {
			file: "phased-url-not-http.yaml",
			want: []string{"spec.check.query.url", "must be an http or https URL with a host"},
		},
		"AutoStopIdleAboveActive": {
			file: "autostop-idle-above-active.yaml",
			want: []string{"spec.autoStop", "activeReplicas must be greater than or equal to spec.autoStop.idleReplicas"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("test", "render", "testdata", "broken", tc.file)
			out, ok := validateOutput(t, root, crossplane, schemas(t), file)
			if ok {
				t.Fatalf("%s validated, want a failure:\n%s", tc.file, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("validate output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
