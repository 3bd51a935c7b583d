package kubectlfirebolt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// The original's objects in namespace firebolt, shaped as it makes them
// (../shared/reference/firebolt-operator.md §6): an instance with internal
// PostgreSQL, a class, an engine serving generation 3 on two replicas and
// an engine serving generation 0.
const (
	uidClass     = "c0000000-0000-0000-0000-000000000001"
	uidInstance  = "i0000000-0000-0000-0000-000000000001"
	uidAnalytics = "e0000000-0000-0000-0000-000000000001"
	uidAdhoc     = "e0000000-0000-0000-0000-000000000002"
	uidElsewhere = "e0000000-0000-0000-0000-000000000003"
)

func originalCRD(t *testing.T, k originalKind) *unstructured.Unstructured {
	return obj(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %s, resourceVersion: "1"}
spec: {group: compute.firebolt.io, scope: Namespaced, names: {kind: %s}}
status: {conditions: [{type: Established, status: "True"}]}
`, k.crd, k.kind))
}

// ourCRD is the claim CRD this product's XRD makes.
func ourCRD(t *testing.T, k originalKind) *unstructured.Unstructured {
	u := originalCRD(t, k)
	u.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: "apiextensions.crossplane.io/v2", Kind: "CompositeResourceDefinition",
		Name: "x" + k.crd, UID: "x-" + types.UID(k.kind), Controller: ptr.To(true),
	}})
	return u
}

func originalCRs(t *testing.T) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngineClass
metadata:
  name: standard
  namespace: firebolt
  uid: `+uidClass+`
  resourceVersion: "7"
  finalizers: [compute.firebolt.io/fireboltengineclass-deletion-guard]
spec: {template: {spec: {containers: []}}}
status: {boundEngines: 1}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata:
  name: demo
  namespace: firebolt
  uid: `+uidInstance+`
  resourceVersion: "8"
  finalizers: [compute.firebolt.io/instance-cleanup]
  labels: {team: data}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"spec":{}}'
    owner: data-team
spec:
  id: 01JBCDEFGHJKMNPQRSTVWXYZ00
  metadata: {postgres: {internal: {}}}
  gateway: {}
status: {phase: Ready, metadataReady: true, gatewayReady: true}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata:
  name: analytics
  namespace: firebolt
  uid: `+uidAnalytics+`
  resourceVersion: "9"
  finalizers: [compute.firebolt.io/engine-cleanup]
spec: {instanceRef: demo, engineClassRef: standard, replicas: 2}
status: {phase: stable, currentGeneration: 3, activeGeneration: 3, observedGeneration: 5}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata:
  name: adhoc
  namespace: firebolt
  uid: `+uidAdhoc+`
  resourceVersion: "10"
  finalizers: [compute.firebolt.io/engine-cleanup]
spec: {instanceRef: demo, replicas: 1}
status: {phase: stable, currentGeneration: 0, activeGeneration: 0, observedGeneration: 1}
`),
	}
}

// made is what the original made: owned by its custom resources, with its
// finalizers and its field manager. unrelated is owned by something else
// and must come through untouched.
func made() []runtime.Object {
	ctrl := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "compute.firebolt.io/v1alpha1", Kind: kind, Name: name, UID: types.UID(uid),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	managed := []metav1.ManagedFieldsEntry{
		{Manager: originalFieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1"},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Subresource: "status"},
	}
	meta := func(apiVersion, kind, name string, owners []metav1.OwnerReference, finalizers ...string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, ResourceVersion: "1",
				OwnerReferences: owners, Finalizers: finalizers, ManagedFields: managed},
		}
	}
	engine := func(name, uid string, gen int) []runtime.Object {
		g := fmt.Sprintf("%s-g%d", name, gen)
		return []runtime.Object{
			meta("apps/v1", "StatefulSet", g, ctrl("FireboltEngine", name, uid)),
			meta("v1", "Service", g+"-hl", ctrl("FireboltEngine", name, uid)),
			meta("v1", "ConfigMap", g+"-config", ctrl("FireboltEngine", name, uid)),
			meta("v1", "Service", name+"-service", ctrl("FireboltEngine", name, uid)),
		}
	}
	inst := ctrl("FireboltInstance", "demo", uidInstance)
	objs := []runtime.Object{
		meta("v1", "Secret", "demo-metadata-postgres-creds", inst),
		meta("apps/v1", "StatefulSet", "demo-metadata-pg", inst),
		meta("v1", "Service", "demo-metadata-pg", inst),
		meta("v1", "PersistentVolumeClaim", "data-demo-metadata-pg-0", nil, "kubernetes.io/pvc-protection"),
		meta("v1", "ConfigMap", "demo-metadata-config", inst),
		meta("apps/v1", "Deployment", "demo-metadata", inst),
		meta("v1", "Service", "demo-metadata", inst),
		meta("v1", "ServiceAccount", "demo-gateway", inst),
		meta("rbac.authorization.k8s.io/v1", "RoleBinding", "demo-gateway-wake", inst),
		meta("v1", "ConfigMap", "demo-gateway-config", inst),
		meta("apps/v1", "Deployment", "demo-gateway", inst, "compute.firebolt.io/gateway-drain", "example.com/keep"),
		meta("v1", "Service", "demo-gateway", inst),
		meta("policy/v1", "PodDisruptionBudget", "demo-gateway", inst),
	}
	unrelated := meta("v1", "ConfigMap", "unrelated", []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "root", UID: "u-1"}})
	unrelated.ManagedFields = managed[1:]
	objs = append(objs, unrelated)
	objs = append(objs, engine("analytics", uidAnalytics, 3)...)
	return append(objs, engine("adhoc", uidAdhoc, 0)...)
}

// operator is the original operator's Deployment, as its chart labels it.
func operator() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "firebolt-operator", Namespace: "firebolt-system", Generation: 1,
			Labels: map[string]string{"app.kubernetes.io/name": "firebolt-operator"}},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1},
	}
}

// migrationCluster is a fake cluster running the original. Deleting one
// of its CRDs installs this product's in its place when
// configurationInstalled is set, as Crossplane does once the name is free.
type migrationCluster struct {
	*fakeCluster
	configurationInstalled bool
	// applied are the claims applied, by namespace/kind/name.
	applied map[string]appliedClaim
}

type appliedClaim struct {
	FieldManager, FieldValidation string
	Body                          map[string]any
}

func newMigrationCluster(t *testing.T, extra ...*unstructured.Unstructured) *migrationCluster {
	t.Helper()
	dynObjs := make([]*unstructured.Unstructured, 0, 8)
	for _, k := range originalKinds {
		dynObjs = append(dynObjs, originalCRD(t, k))
	}
	dynObjs = append(dynObjs, originalCRs(t)...)
	dynObjs = append(dynObjs, extra...)
	f := newFakeCluster(t, nil, operator())
	objs := make([]runtime.Object, 0, len(dynObjs))
	for _, o := range dynObjs {
		objs = append(objs, o)
	}
	f.dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		engineResource:   "FireboltEngineList",
		instanceResource: "FireboltInstanceList",
		classResource:    "FireboltEngineClassList",
		crdResource:      "CustomResourceDefinitionList",
	}, objs...)
	scheme := metadatafake.NewTestScheme()
	metav1.AddMetaToScheme(scheme)
	f.md = metadatafake.NewSimpleMetadataClient(scheme, made()...)
	mc := &migrationCluster{fakeCluster: f, configurationInstalled: true, applied: map[string]appliedClaim{}}
	mc.react(t)
	return mc
}

// react makes the fakes act as the API server and the controllers would:
// a Deployment scaled to 0 loses its pods, a deleted CRD is replaced by
// this product's, and a claim is server-side applied.
func (mc *migrationCluster) react(t *testing.T) {
	mc.core.PrependReactor("patch", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchActionImpl)
		o, err := mc.core.Tracker().Get(a.GetResource(), a.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		d := o.(*appsv1.Deployment).DeepCopy()
		var p struct {
			Spec struct {
				Replicas *int32 `json:"replicas"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(pa.GetPatch(), &p); err != nil {
			return true, nil, err
		}
		d.Spec.Replicas = p.Spec.Replicas
		d.Generation++
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: *p.Spec.Replicas}
		return true, d, mc.core.Tracker().Update(a.GetResource(), d, a.GetNamespace())
	})
	tracker := mc.dyn.Tracker()
	mc.dyn.PrependReactor("delete", crdResource.Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.DeleteActionImpl).GetName()
		if err := tracker.Delete(crdResource, "", name); err != nil {
			return true, nil, err
		}
		if mc.configurationInstalled {
			for _, k := range originalKinds {
				if k.crd == name {
					return true, nil, tracker.Create(crdResource, ourCRD(t, k), "")
				}
			}
		}
		return true, nil, nil
	})
	mc.dyn.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchActionImpl)
		if pa.GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(pa.GetPatch()); err != nil {
			return true, nil, err
		}
		var body map[string]any
		if err := json.Unmarshal(pa.GetPatch(), &body); err != nil {
			return true, nil, err
		}
		mc.applied[pa.GetNamespace()+"/"+u.GetKind()+"/"+pa.GetName()] = appliedClaim{
			FieldManager: pa.PatchOptions.FieldManager, FieldValidation: pa.PatchOptions.FieldValidation, Body: body}
		_, err := tracker.Get(a.GetResource(), pa.GetNamespace(), pa.GetName())
		if err == nil {
			return true, u, tracker.Update(a.GetResource(), u, pa.GetNamespace())
		}
		return true, u, tracker.Create(a.GetResource(), u, pa.GetNamespace())
	})
}

// writes are the write actions every client saw, as verb resource
// namespace/name, sorted.
func (mc *migrationCluster) writes() []string {
	var out []string
	add := func(acts []k8stesting.Action) {
		for _, a := range acts {
			switch a.GetVerb() {
			case "get", "list", "watch":
				continue
			}
			name := ""
			if n, ok := a.(interface{ GetName() string }); ok {
				name = n.GetName()
			}
			out = append(out, fmt.Sprintf("%s %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetNamespace(), name))
		}
	}
	add(mc.dyn.Actions())
	add(mc.core.Actions())
	add(mc.md.Actions())
	sort.Strings(out)
	return out
}

// state is what a migration leaves: every object the original made (its
// owners, finalizers and managers), the CRDs, the custom resources or
// claims, the operator's replicas and the backup directory's files.
func (mc *migrationCluster) state(t *testing.T, backupDir string) map[string]any {
	t.Helper()
	st := map[string]any{}
	for _, r := range releaseResources {
		l, err := mc.md.Resource(r).Namespace(testNamespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			var managers []string
			for _, m := range o.ManagedFields {
				managers = append(managers, m.Manager)
			}
			st[r.Resource+"/"+o.Name] = map[string]any{"owners": o.OwnerReferences, "finalizers": o.Finalizers, "managers": managers}
		}
	}
	for _, r := range []schema.GroupVersionResource{crdResource, classResource, instanceResource, engineResource} {
		l, err := mc.dyn.Resource(r).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Items {
			c := o.DeepCopy()
			c.SetResourceVersion("")
			st[r.Resource+"/"+o.GetNamespace()+"/"+o.GetName()] = c.Object
		}
	}
	d, err := mc.core.AppsV1().Deployments("firebolt-system").Get(t.Context(), "firebolt-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st["operator replicas"] = *d.Spec.Replicas
	files, _ := os.ReadDir(backupDir)
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.Name())
	}
	st["backup files"] = names
	return st
}

// readSaved reads one backup file back.
func readSaved(t *testing.T, dir, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return u.Object
}
