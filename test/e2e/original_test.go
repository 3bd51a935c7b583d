package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/internal/kubectlfirebolt"
	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// The original operator, as the migration scenario finds it: its CRDs
// (served by the API server as the original's chart installs them, with a
// schema that keeps every field), its custom resources with their
// finalizers and status, the objects it makes (names, labels, owner
// references, finalizers and field manager as ../shared/reference/
// firebolt-operator.md §6 has them) and its Deployment. It is made before
// the Configuration is installed (harness.BeforePackages), and the
// migration's first five steps run there, each namespace's interrupted
// after a different step, since this product's XRDs can serve the claim
// kinds only once the original's CRDs are gone. TestMigration does the
// rest.

// migrationNamespaces are the namespaces the original runs in: the
// migration of migrate-k is interrupted after step k.
var migrationNamespaces = []string{"migrate-1", "migrate-2", "migrate-3", "migrate-4", "migrate-5"}

// migrationRefusedNamespace holds an engine mid-rollout, which the
// migration refuses until it is at rest.
const migrationRefusedNamespace = "migrate-refused"

// originalOperatorNamespace holds the original operator's Deployment.
const originalOperatorNamespace = "firebolt-system"

var (
	crdGVR      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	origEngines = schema.GroupVersionResource{Group: "compute.firebolt.io", Version: "v1alpha1", Resource: "fireboltengines"}
	origInsts   = schema.GroupVersionResource{Group: "compute.firebolt.io", Version: "v1alpha1", Resource: "fireboltinstances"}
	origClasses = schema.GroupVersionResource{Group: "compute.firebolt.io", Version: "v1alpha1", Resource: "fireboltengineclasses"}
)

// original records what the original ran before the migration, for
// TestMigration to compare with.
var original struct {
	sync.Mutex
	// backupDir is the one backup directory every run uses.
	backupDir string
	// uids are the UIDs of every pod, PVC, Secret and StatefulSet by
	// namespace and kind/name.
	uids map[string]map[string]types.UID
	// ids are the instances' spec.id by namespace.
	ids map[string]string
	// err is what went wrong, reported by TestMigration.
	err error
}

// originalEngine is one of the original's engines in every namespace.
type originalEngine struct {
	name     string
	replicas int
	gen      int
}

var originalEngines = []originalEngine{{"analytics", 2, 3}, {"adhoc", 1, 0}}

// setUpOriginal is the BeforePackages hook.
func setUpOriginal(ctx context.Context, c *harness.Cluster) error {
	if err := setUpOriginalAndMigrate(ctx, c); err != nil {
		original.Lock()
		original.err = err
		original.Unlock()
		// The stack still starts: TestMigration fails with the error,
		// the other scenarios run. Whatever CRD of the original is left
		// must go, or the Configuration's XRDs cannot serve the claims.
		for _, k := range []string{"fireboltengines", "fireboltinstances", "fireboltengineclasses"} {
			_ = c.Dyn.Resource(crdGVR).Delete(ctx, k+".compute.firebolt.io", metav1.DeleteOptions{})
		}
	}
	return nil
}

func setUpOriginalAndMigrate(ctx context.Context, c *harness.Cluster) error {
	dir, err := os.MkdirTemp(c.Dir, "migration-backup-")
	if err != nil {
		return err
	}
	original.backupDir = dir
	original.uids = map[string]map[string]types.UID{}
	original.ids = map[string]string{}
	if err := createOriginalCRDs(ctx, c); err != nil {
		return err
	}
	if err := createOriginalOperator(ctx, c); err != nil {
		return err
	}
	all := append(append([]string(nil), migrationNamespaces...), migrationRefusedNamespace)
	for i, ns := range all {
		if err := createOriginal(ctx, c, ns, fmt.Sprintf("01JQ8M6G3Z%016d", i)); err != nil {
			return errors.Wrapf(err, "cannot make the original's objects in %s", ns)
		}
	}
	if err := setOriginalStatus(ctx, c, migrationRefusedNamespace, origEngines, "analytics", map[string]any{"phase": "draining", "currentGeneration": 4, "activeGeneration": 4, "drainingGeneration": 3}); err != nil {
		return err
	}
	for _, ns := range all {
		if err := waitOriginalRunning(ctx, c, ns); err != nil {
			return err
		}
	}
	for _, ns := range all {
		if original.uids[ns], err = liveUIDs(ctx, c, ns); err != nil {
			return err
		}
	}

	// Refused while an engine is mid-rollout and the instance is not
	// Ready, each named, with nothing changed; once they rest, they go
	// with the others.
	if err := setOriginalStatus(ctx, c, migrationRefusedNamespace, origInsts, "demo", map[string]any{"phase": "Provisioning"}); err != nil {
		return err
	}
	r := migrate(ctx, c, 0, "-n", migrationRefusedNamespace)
	if r.Code != 1 || !strings.Contains(r.Stderr, `fireboltengine migrate-refused/analytics is in phase "draining", mid-rollout`) ||
		!strings.Contains(r.Stderr, `fireboltinstance migrate-refused/demo is in phase "Provisioning", not Ready`) {
		return errors.Errorf("a migration of an engine mid-rollout and an instance not Ready: exit %d, want 1 naming both:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if err := setOriginalStatus(ctx, c, migrationRefusedNamespace, origInsts, "demo", map[string]any{"phase": "Ready"}); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, migrationRefusedNamespace+"_fireboltengine_analytics.json")); !os.IsNotExist(err) {
		return errors.Errorf("a refused migration saved something: %v", err)
	}
	if err := setOriginalStatus(ctx, c, migrationRefusedNamespace, origEngines, "analytics", map[string]any{"phase": "stable", "currentGeneration": 3, "activeGeneration": 3, "drainingGeneration": nil}); err != nil {
		return err
	}

	// Each namespace's migration interrupted after another step, as Ctrl-C
	// would, before the next step begins.
	for k, ns := range migrationNamespaces {
		step := k + 1
		r := migrate(ctx, c, step, "-n", ns)
		if r.Code != 1 || !strings.Contains(r.Stderr, fmt.Sprintf("interrupted before step %d/7", step+1)) {
			return errors.Errorf("migration of %s interrupted after step %d: exit %d\n%s%s", ns, step, r.Code, r.Stdout, r.Stderr)
		}
	}
	// Every namespace, where each was left, up to the CRDs' deletion: this
	// product's XRDs cannot serve the claims before.
	r = migrate(ctx, c, 5, "-A")
	if r.Code != 1 || !strings.Contains(r.Stderr, "interrupted before step 6/7") {
		return errors.Errorf("migration of every namespace up to step 5: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	return nil
}

// migrate runs kubectl firebolt migrate with the one backup directory,
// interrupted as soon as it starts the step after step stopAfter (0: run
// to the end).
func migrate(ctx context.Context, c *harness.Cluster, stopAfter int, args ...string) pluginRun {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var out, errOut lockedBuffer
	w := &interruptAt{to: &out, cancel: func() {}}
	if stopAfter > 0 {
		w.line, w.cancel = fmt.Sprintf("step %d/7:", stopAfter+1), cancel
	}
	all := append([]string{"--kubeconfig", c.Kubeconfig, "migrate", "--backup-dir", original.backupDir, "--timeout", "3m"}, args...)
	code := kubectlfirebolt.Run(ctx, all, w, &errOut, kubectlfirebolt.NewClients)
	return pluginRun{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// interruptAt cancels once what was written holds line.
type interruptAt struct {
	to     *lockedBuffer
	mu     sync.Mutex
	seen   bytes.Buffer
	line   string
	cancel func()
}

func (w *interruptAt) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.seen.Write(p)
	hit := w.line != "" && strings.Contains(w.seen.String(), w.line)
	w.mu.Unlock()
	if hit {
		w.cancel()
	}
	return w.to.Write(p)
}

// createOriginalCRDs serves the original's three kinds as its chart does:
// namespaced, with a status subresource; the schema keeps every field.
func createOriginalCRDs(ctx context.Context, c *harness.Cluster) error {
	for _, k := range []struct{ kind, plural string }{
		{"FireboltEngineClass", "fireboltengineclasses"}, {"FireboltInstance", "fireboltinstances"}, {"FireboltEngine", "fireboltengines"},
	} {
		u, err := objectYAML(fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]s.compute.firebolt.io, labels: {app.kubernetes.io/name: firebolt-operator-crds}}
spec:
  group: compute.firebolt.io
  scope: Namespaced
  names: {kind: %[1]s, listKind: %[1]sList, plural: %[2]s, singular: %[3]s}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, k.kind, k.plural, strings.ToLower(k.kind)))
		if err != nil {
			return err
		}
		if _, err := c.Dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return errors.Wrapf(err, "cannot create the original's CRD %s", u.GetName())
		}
	}
	return harness.Wait(ctx, time.Minute, "the original's CRDs established", func(ctx context.Context) (bool, string, error) {
		for _, r := range []schema.GroupVersionResource{origEngines, origInsts, origClasses} {
			if _, err := c.Dyn.Resource(r).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
				return false, harness.SeenErr(err), nil
			}
		}
		return true, "", nil
	})
}

// createOriginalOperator runs the original operator's Deployment, as its
// chart labels it (KWOK runs its pod).
func createOriginalOperator(ctx context.Context, c *harness.Cluster) error {
	if err := createNamespace(ctx, c, originalOperatorNamespace); err != nil {
		return err
	}
	u, err := objectYAML(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: firebolt-operator, namespace: firebolt-system, labels: {app.kubernetes.io/name: firebolt-operator}}
spec:
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/name: firebolt-operator}}
  template:
    metadata: {labels: {app.kubernetes.io/name: firebolt-operator}}
    spec: {containers: [{name: manager, image: ghcr.io/firebolt-db/firebolt-operator:v1.0.0}]}
`)
	if err != nil {
		return err
	}
	_, err = c.Dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(originalOperatorNamespace).
		Create(ctx, u, metav1.CreateOptions{FieldManager: "helm"})
	return errors.Wrap(err, "cannot create the original operator's Deployment")
}

func createNamespace(ctx context.Context, c *harness.Cluster, ns string) error {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	_, err := c.Dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, u, metav1.CreateOptions{})
	if kerrors.IsAlreadyExists(err) {
		return nil
	}
	return errors.Wrapf(err, "cannot create namespace %s", ns)
}

func objectYAML(y string) (*unstructured.Unstructured, error) {
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		return nil, errors.Wrap(err, "bad object YAML")
	}
	u := &unstructured.Unstructured{}
	return u, errors.Wrap(u.UnmarshalJSON(j), "bad object")
}
