package kubectlfirebolt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// interrupted runs a migration that is interrupted, as Ctrl-C would, as
// soon as it says it starts the step after step k.
func interrupted(t *testing.T, mc *migrationCluster, k int, args []string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &cancelOn{line: fmt.Sprintf("step %d/%d:", k+1, stepCount), cancel: cancel}
	var errOut strings.Builder
	code := Run(ctx, args, out, &errOut, mc.newClients)
	return result{Stdout: out.b.String(), Stderr: errOut.String(), Code: code}
}

// cancelOn cancels once what was written holds line.
type cancelOn struct {
	b      strings.Builder
	line   string
	cancel func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.b.Write(p)
	if strings.Contains(c.b.String(), c.line) {
		c.cancel()
	}
	return n, err
}

func migrateArgs(dir string, extra ...string) []string {
	return append([]string{"migrate", "--backup-dir", dir, "--timeout", "2s"}, extra...)
}

// TestMigrate runs the whole migration of one namespace and checks what it
// leaves: nothing made by the original lost or owned by it any more, its
// custom resources saved then deleted, its CRDs replaced, and every custom
// resource applied as a claim carrying what the function adopts by.
func TestMigrate(t *testing.T) {
	mc := newMigrationCluster(t)
	dir := filepath.Join(t.TempDir(), "backup")
	r := mc.run(t, migrateArgs(dir)...)
	if r.Code != 0 {
		t.Fatalf("migrate failed: %s\n%s", r.Stderr, r.Stdout)
	}
	st := mc.state(t, dir)

	// What the original made: owned by it no more, its finalizers and its
	// field manager gone, everything else kept.
	released := map[string]any{"owners": []metav1.OwnerReference(nil), "finalizers": []string(nil), "managers": []string{"kube-controller-manager"}}
	for _, name := range []string{"statefulsets/analytics-g3", "services/analytics-g3-hl", "configmaps/analytics-g3-config",
		"services/analytics-service", "statefulsets/adhoc-g0", "secrets/demo-metadata-postgres-creds", "statefulsets/demo-metadata-pg",
		"deployments/demo-metadata", "poddisruptionbudgets/demo-gateway", "rolebindings/demo-gateway-wake", "serviceaccounts/demo-gateway"} {
		if diff := cmp.Diff(released, st[name]); diff != "" {
			t.Errorf("%s after the migration (-want +got):\n%s", name, diff)
		}
	}
	gateway := st["deployments/demo-gateway"].(map[string]any)
	if diff := cmp.Diff([]string{"example.com/keep"}, gateway["finalizers"]); diff != "" {
		t.Errorf("the gateway keeps finalizers that are not the original's (-want +got):\n%s", diff)
	}
	untouched := map[string]any{
		"configmaps/unrelated": map[string]any{"owners": []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "root", UID: "u-1"}},
			"finalizers": []string(nil), "managers": []string{"kube-controller-manager"}},
		"persistentvolumeclaims/data-demo-metadata-pg-0": map[string]any{"owners": []metav1.OwnerReference(nil),
			"finalizers": []string{"kubernetes.io/pvc-protection"}, "managers": []string{originalFieldManager, "kube-controller-manager"}},
	}
	for name, want := range untouched {
		if diff := cmp.Diff(want, st[name]); diff != "" {
			t.Errorf("%s is not the original's and must be left alone (-want +got):\n%s", name, diff)
		}
	}
	// The volume claim carries the original's field manager but no owner
	// reference or finalizer of it: it is left as it is, not rewritten.
	for _, w := range mc.writes() {
		if strings.Contains(w, "data-demo-metadata-pg-0") || strings.Contains(w, "unrelated") {
			t.Errorf("wrote %s, which the original does not hold", w)
		}
	}

	// What the claims take over carries the name the function composes
	// it under, so that Crossplane observes it as that composed resource.
	for r, names := range map[schema.GroupVersionResource]map[string]string{
		{Group: "apps", Version: "v1", Resource: "statefulsets"}: {"analytics-g3": "g3-statefulset", "demo-metadata-pg": "postgres"},
		{Version: "v1", Resource: "services"}:                    {"analytics-service": "service", "adhoc-g0-hl": "g0-headless"},
		{Version: "v1", Resource: "secrets"}:                     {"demo-metadata-postgres-creds": "postgres-credentials"},
	} {
		for name, want := range names {
			o, err := mc.md.Resource(r).Namespace(testNamespace).Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Annotations["crossplane.io/composition-resource-name"]; got != want {
				t.Errorf("%s %s stamped %q, want %q", r.Resource, name, got, want)
			}
		}
	}

	// The operator stopped, the CRDs are this product's.
	if st["operator replicas"] != int32(0) {
		t.Errorf("operator replicas = %v, want 0", st["operator replicas"])
	}
	for _, k := range originalKinds {
		crd := &unstructured.Unstructured{Object: st["customresourcedefinitions//"+k.crd].(map[string]any)}
		if len(crd.GetOwnerReferences()) != 1 || crd.GetOwnerReferences()[0].Kind != "CompositeResourceDefinition" {
			t.Errorf("customresourcedefinition %s is not this product's after the migration: %v", k.crd, crd.GetOwnerReferences())
		}
	}

	// Every custom resource saved, spec and status.
	if diff := cmp.Diff([]string{"firebolt_fireboltengine_adhoc.json", "firebolt_fireboltengine_analytics.json",
		"firebolt_fireboltengineclass_standard.json", "firebolt_fireboltinstance_demo.json"}, st["backup files"]); diff != "" {
		t.Errorf("backup files (-want +got):\n%s", diff)
	}
	saved := readSaved(t, dir, "firebolt_fireboltengine_analytics.json")
	if got, _, _ := unstructured.NestedInt64(saved, "status", "activeGeneration"); got != 3 {
		t.Errorf("saved analytics activeGeneration = %d, want 3", got)
	}
	if uid, _, _ := unstructured.NestedString(saved, "metadata", "uid"); uid != uidAnalytics {
		t.Errorf("saved analytics uid = %q, want %q", uid, uidAnalytics)
	}

	// The claims: spec as it was, the migration's annotations, strict
	// server-side apply by the plugin.
	want := map[string]appliedClaim{
		"firebolt/FireboltEngineClass/standard": {FieldManager: FieldManager, FieldValidation: "Strict", Body: map[string]any{
			"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngineClass",
			"metadata": map[string]any{"name": "standard", "namespace": "firebolt", "annotations": map[string]any{"firebolt.io/migrated-from": "firebolt-operator"}},
			"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{}}}},
		}},
		"firebolt/FireboltInstance/demo": {FieldManager: FieldManager, FieldValidation: "Strict", Body: map[string]any{
			"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltInstance",
			"metadata": map[string]any{"name": "demo", "namespace": "firebolt", "labels": map[string]any{"team": "data"},
				"annotations": map[string]any{"firebolt.io/migrated-from": "firebolt-operator", "owner": "data-team"}},
			"spec": map[string]any{"id": "01JBCDEFGHJKMNPQRSTVWXYZ00", "metadata": map[string]any{"postgres": map[string]any{"internal": map[string]any{}}}, "gateway": map[string]any{}},
		}},
		"firebolt/FireboltEngine/analytics": {FieldManager: FieldManager, FieldValidation: "Strict", Body: map[string]any{
			"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngine",
			"metadata": map[string]any{"name": "analytics", "namespace": "firebolt",
				"annotations": map[string]any{"firebolt.io/migrated-from": "firebolt-operator", "firebolt.io/adopt-generation": "3"}},
			"spec": map[string]any{"instanceRef": "demo", "engineClassRef": "standard", "replicas": float64(2)},
		}},
		"firebolt/FireboltEngine/adhoc": {FieldManager: FieldManager, FieldValidation: "Strict", Body: map[string]any{
			"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngine",
			"metadata": map[string]any{"name": "adhoc", "namespace": "firebolt",
				"annotations": map[string]any{"firebolt.io/migrated-from": "firebolt-operator", "firebolt.io/adopt-generation": "0"}},
			"spec": map[string]any{"instanceRef": "demo", "replicas": float64(1)},
		}},
	}
	if diff := cmp.Diff(want, mc.applied); diff != "" {
		t.Errorf("claims applied (-want +got):\n%s", diff)
	}
	golden(t, "migrate.txt", strings.ReplaceAll(r.Stdout, dir, "BACKUP"))
}

// TestMigrateReadsNoSecret: the original's Secrets (PostgreSQL's password
// among them) are released through the metadata client alone; neither
// the dynamic nor the typed client ever asks for one.
func TestMigrateReadsNoSecret(t *testing.T) {
	mc := newMigrationCluster(t)
	if r := mc.run(t, migrateArgs(filepath.Join(t.TempDir(), "b"))...); r.Code != 0 {
		t.Fatalf("migrate failed: %s", r.Stderr)
	}
	for _, a := range append(mc.dyn.Actions(), mc.core.Actions()...) {
		if a.GetResource().Resource == "secrets" {
			t.Errorf("%s secrets through a client that returns their data", a.GetVerb())
		}
	}
	touched := false
	for _, a := range mc.md.Actions() {
		if a.GetResource().Resource == "secrets" && a.GetVerb() == "patch" {
			touched = true
		}
	}
	if !touched {
		t.Error("the PostgreSQL credentials Secret was not released through the metadata client")
	}
}

// TestMigrateRefusesWhileNotAtRest: an engine mid-rollout or an instance
// not Ready stops the migration before anything is changed, each named.
func TestMigrateRefusesWhileNotAtRest(t *testing.T) {
	mc := newMigrationCluster(t)
	set := func(r schema.GroupVersionResource, name, phase string) {
		u, err := mc.dyn.Resource(r).Namespace(testNamespace).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(u.Object, phase, "status", "phase")
		if err := mc.dyn.Tracker().Update(r, u, testNamespace); err != nil {
			t.Fatal(err)
		}
	}
	set(engineResource, "analytics", "draining")
	set(instanceResource, "demo", "Provisioning")
	mc.dyn.ClearActions()
	dir := filepath.Join(t.TempDir(), "b")
	r := mc.run(t, migrateArgs(dir)...)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1", r.Code)
	}
	for _, want := range []string{
		`fireboltinstance firebolt/demo is in phase "Provisioning", not Ready`,
		`fireboltengine firebolt/analytics is in phase "draining", mid-rollout`,
		"nothing was changed",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
		}
	}
	if w := mc.writes(); len(w) != 0 {
		t.Errorf("a refused migration wrote: %v", w)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused migration created its backup directory: %v", err)
	}
}

// TestMigrateDryRun prints every step and object and changes nothing.
func TestMigrateDryRun(t *testing.T) {
	mc := newMigrationCluster(t)
	dir := filepath.Join(t.TempDir(), "b")
	r := mc.run(t, migrateArgs(dir, "--dry-run")...)
	if r.Code != 0 {
		t.Fatalf("dry run failed: %s", r.Stderr)
	}
	if w := mc.writes(); len(w) != 0 {
		t.Errorf("a dry run wrote: %v", w)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a dry run created its backup directory: %v", err)
	}
	golden(t, "migrate-dry-run.txt", strings.ReplaceAll(r.Stdout, dir, "BACKUP"))
}

// TestMigrateInterrupted: a migration stopped after any step completes
// when run again, and ends exactly where an uninterrupted one does.
func TestMigrateInterrupted(t *testing.T) {
	ref := newMigrationCluster(t)
	refDir := filepath.Join(t.TempDir(), "b")
	if r := ref.run(t, migrateArgs(refDir)...); r.Code != 0 {
		t.Fatalf("migrate failed: %s", r.Stderr)
	}
	want := ref.state(t, refDir)
	for k := stepCheck; k < stepCount; k++ {
		t.Run(stepNames[k], func(t *testing.T) {
			mc := newMigrationCluster(t)
			dir := filepath.Join(t.TempDir(), "b")
			if r := interrupted(t, mc, k, migrateArgs(dir)); r.Code != 1 || !strings.Contains(r.Stderr, "interrupted before step") {
				t.Fatalf("interrupted run: exit %d, stderr %s", r.Code, r.Stderr)
			}
			if r := mc.run(t, migrateArgs(dir)...); r.Code != 0 {
				t.Fatalf("run again after step %d: %s\n%s", k, r.Stderr, r.Stdout)
			}
			if diff := cmp.Diff(want, mc.state(t, dir)); diff != "" {
				t.Errorf("interrupted after step %d, then run again (-uninterrupted +got):\n%s", k, diff)
			}
		})
	}
}

// TestMigrateWaitsForTheConfiguration: with this product not installed the
// migration stops at step 6 having lost nothing, and completes once it is.
func TestMigrateWaitsForTheConfiguration(t *testing.T) {
	mc := newMigrationCluster(t)
	mc.configurationInstalled = false
	dir := filepath.Join(t.TempDir(), "b")
	r := mc.run(t, migrateArgs(dir)...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "step 6/7 (wait for this product's XRDs)") || !strings.Contains(r.Stderr, "not done after 2s") {
		t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if len(mc.applied) != 0 {
		t.Errorf("claims applied before the XRDs served them: %v", mc.applied)
	}
	for _, k := range originalKinds {
		if err := mc.dyn.Tracker().Create(crdResource, ourCRD(t, k), ""); err != nil {
			t.Fatal(err)
		}
	}
	if r := mc.run(t, migrateArgs(dir)...); r.Code != 0 {
		t.Fatalf("run again: %s", r.Stderr)
	}
	if len(mc.applied) != 4 {
		t.Errorf("%d claims applied, want 4", len(mc.applied))
	}
}

// TestMigrateOneNamespaceOfTwo: the CRD that still serves another
// namespace is kept, and step 6 says what is left.
func TestMigrateOneNamespaceOfTwo(t *testing.T) {
	mc := newMigrationCluster(t, obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: other, namespace: team-b, uid: `+uidElsewhere+`, resourceVersion: "3"}
spec: {instanceRef: x, replicas: 1}
status: {phase: stable, activeGeneration: 0}
`))
	r := mc.run(t, migrateArgs(filepath.Join(t.TempDir(), "b"))...)
	want := "customresourcedefinition fireboltengines.compute.firebolt.io is still the original's (it serves 1 fireboltengines in namespace team-b)"
	if r.Code != 1 || !strings.Contains(r.Stderr, want) {
		t.Fatalf("exit %d, want stderr with %q:\n%s", r.Code, want, r.Stderr)
	}
	if _, err := mc.dyn.Resource(engineResource).Namespace("team-b").Get(t.Context(), "other", metav1.GetOptions{}); err != nil {
		t.Errorf("the other namespace's engine: %v", err)
	}
	if _, err := mc.dyn.Resource(engineResource).Namespace(testNamespace).Get(t.Context(), "analytics", metav1.GetOptions{}); err == nil {
		t.Error("the migrated namespace's engine is still the original's")
	}
}

// TestMigrateOperatorNotFound: a migration that cannot find the operator
// says what to do and changes nothing; --operator-stopped goes on.
func TestMigrateOperatorNotFound(t *testing.T) {
	mc := newMigrationCluster(t)
	if err := mc.core.Tracker().Delete(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "firebolt-system", "firebolt-operator"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "b")
	r := mc.run(t, migrateArgs(dir)...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "run again with --operator-stopped") {
		t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if w := mc.writes(); len(w) != 0 {
		t.Errorf("wrote before the operator was stopped: %v", w)
	}
	if r := mc.run(t, migrateArgs(dir, "--operator-stopped")...); r.Code != 0 {
		t.Fatalf("--operator-stopped: %s", r.Stderr)
	}
}

// TestMigrateLeavesForeignClaims: a claim of the same name that no
// migration made is not overwritten.
func TestMigrateLeavesForeignClaims(t *testing.T) {
	mc := newMigrationCluster(t)
	dir := filepath.Join(t.TempDir(), "b")
	if r := interrupted(t, mc, stepWait, migrateArgs(dir)); r.Code != 1 {
		t.Fatalf("exit %d", r.Code)
	}
	foreign := obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: adhoc, namespace: firebolt}
spec: {instanceRef: demo, replicas: 4}
`)
	if err := mc.dyn.Tracker().Create(engineResource, foreign, testNamespace); err != nil {
		t.Fatal(err)
	}
	r := mc.run(t, migrateArgs(dir)...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "1 of 4 claims not applied") ||
		!strings.Contains(r.Stderr, "fireboltengine firebolt/adhoc: a claim of that name exists and no migration made it") {
		t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if _, ok := mc.applied["firebolt/FireboltEngine/adhoc"]; ok {
		t.Error("the foreign claim was applied over")
	}
	if len(mc.applied) != 3 {
		t.Errorf("%d claims applied, want the other 3", len(mc.applied))
	}
}

// TestMigrateHostileBackup: a backup directory the claims would be made
// from is checked file by file; a bad file stops the migration before
// anything is changed, named with the rule it breaks.
func TestMigrateHostileBackup(t *testing.T) {
	good := `{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"FireboltEngine","metadata":{"name":"x","namespace":"firebolt","uid":"u"},"spec":{}}`
	cases := map[string]struct {
		file, content, want string
	}{
		"not JSON":          {"firebolt_fireboltengine_x.json", "{", "not a JSON object"},
		"JSON null":         {"firebolt_fireboltengine_x.json", "null", "not a JSON object"},
		"another group":     {"firebolt_fireboltengine_x.json", strings.Replace(good, "compute.firebolt.io", "apps", 1), `apiVersion "apps/v1alpha1": must be compute.firebolt.io/v1alpha1`},
		"another kind":      {"firebolt_fireboltengine_x.json", strings.Replace(good, "FireboltEngine", "Secret", 1), `kind "Secret": must be`},
		"name with a slash": {"firebolt_fireboltengine_x.json", strings.Replace(good, `"name":"x"`, `"name":"../x"`, 1), `metadata.name "../x"`},
		"no uid":            {"firebolt_fireboltengine_x.json", strings.Replace(good, `,"uid":"u"`, "", 1), "metadata.uid: missing"},
		"no spec":           {"firebolt_fireboltengine_x.json", strings.Replace(good, `,"spec":{}`, "", 1), "spec: missing or not an object"},
		"another file name": {"firebolt_fireboltengine_y.json", good, "holds fireboltengine firebolt/x, which is saved as firebolt_fireboltengine_x.json"},
		"too large":         {"firebolt_fireboltengine_x.json", good + strings.Repeat(" ", maxBackupFileBytes), "larger than 2097152 bytes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc := newMigrationCluster(t)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			r := mc.run(t, migrateArgs(dir)...)
			if r.Code != 1 || !strings.Contains(r.Stderr, filepath.Join(dir, tc.file)) || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("exit %d, want stderr naming %s and %q:\n%s", r.Code, tc.file, tc.want, r.Stderr)
			}
			if w := mc.writes(); len(w) != 0 {
				t.Errorf("wrote with a bad backup: %v", w)
			}
		})
	}
}

// TestReleasePatch: the patch takes off exactly what ties an object to
// the original, and fails if the object changed since it was read.
func TestReleasePatch(t *testing.T) {
	uids := map[types.UID]bool{uidAnalytics: true}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: "42",
		OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "compute.firebolt.io/v1alpha1", Kind: "FireboltEngine", Name: "analytics", UID: uidAnalytics},
			{APIVersion: "compute.firebolt.io/v1alpha1", Kind: "FireboltEngine", Name: "unknown", UID: "other"},
			{APIVersion: "example.com/v1", Kind: "FireboltEngine", Name: "lookalike", UID: uidAnalytics},
		},
		Finalizers:    []string{"compute.firebolt.io/engine-cleanup", "example.com/x"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: originalFieldManager}},
		Annotations:   map[string]string{"a": "b"},
	}}
	b, err := releasePatch(obj.ResourceVersion, holds(obj, uids, "g3-statefulset"))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"test","path":"/metadata/resourceVersion","value":"42"},` +
		`{"op":"replace","path":"/metadata/ownerReferences","value":[` +
		`{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"FireboltEngine","name":"unknown","uid":"other"},` +
		`{"apiVersion":"example.com/v1","kind":"FireboltEngine","name":"lookalike","uid":"` + uidAnalytics + `"}]},` +
		`{"op":"replace","path":"/metadata/finalizers","value":["example.com/x"]},` +
		`{"op":"replace","path":"/metadata/managedFields","value":[]},` +
		`{"op":"add","path":"/metadata/annotations/crossplane.io~1composition-resource-name","value":"g3-statefulset"}]`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("release patch (-want +got):\n%s", diff)
	}

	// An object without annotations gets the whole map; one stamped
	// already and held by nothing is left alone.
	bare := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7"}}
	if b, _ := releasePatch("7", holds(bare, uids, "service")); string(b) != `[{"op":"test","path":"/metadata/resourceVersion","value":"7"},`+
		`{"op":"add","path":"/metadata/annotations","value":{"crossplane.io/composition-resource-name":"service"}}]` {
		t.Errorf("release patch of an object without annotations: %s", b)
	}
	bare.Annotations = map[string]string{"crossplane.io/composition-resource-name": "service"}
	if h := holds(bare, uids, "service"); h.any() {
		t.Errorf("an object stamped already and held by nothing is released again: %+v", h)
	}
}
