package statemetrics

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

var unexported = cmp.Exporter(func(reflect.Type) bool { return true })

// TestTrim: the cache keeps of each object only what its series read, so
// a composite's recorded renderings, pod template, messages and managed
// fields never stay in memory; an object already trimmed passes
// unchanged.
func TestTrim(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	engine := xr(v1alpha1.XFireboltEngineKind, "demo-x1", "ns1", "demo", map[string]any{
		"spec": map[string]any{"instanceRef": long, "replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "engine", "image": "e:1"}}}}},
		"status": map[string]any{
			"phase": "creating", "currentGeneration": int64(5), "activeGeneration": int64(4), "lastReconciled": "2026-11-24T08:59:00Z",
			"renderings": []any{rendering(4), rendering(5)},
			"conditions": []any{cond("EngineReady", "False"), cond("InstanceReady", "True")},
		},
	})
	engine.SetResourceVersion("42")
	engine.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "crossplane", Operation: metav1.ManagedFieldsOperationApply}})
	engine.SetAnnotations(map[string]string{"big": strings.Repeat("x", 1<<16)})
	fresh := xr(v1alpha1.XFireboltEngineKind, "new-x", "ns1", "new", map[string]any{"spec": map[string]any{"instanceRef": "i", "replicas": int64(1)}})
	instance := xr(v1alpha1.XFireboltInstanceKind, "inst-x", "ns1", "inst", map[string]any{
		"spec": map[string]any{"metadata": map[string]any{}},
		"status": map[string]any{"phase": "Degraded", "id": "acct-9",
			"auth": map[string]any{"signingKeys": []any{
				map[string]any{"phase": "Active"}, map[string]any{"phase": "Bogus"}, "not a key",
			}}},
	})
	set := sts("ns1", "demo", 5, 3, 2)
	set.Spec.Template.Spec.Containers = []corev1.Container{{Name: "engine", Image: "e:1"}}

	cases := map[string]struct {
		trim func(any) (any, error)
		in   any
		want any
	}{
		"Engine": {
			trim: trimEngine, in: engine,
			want: &engineState{
				ObjectMeta: metav1.ObjectMeta{Name: "demo-x1", ResourceVersion: "42"},
				claim:      claim{namespace: "ns1", name: "demo"},
				// Cut to 253 bytes at a rune boundary: 126 two-byte runes.
				instance: strings.Repeat("é", 126),
				replicas: 3, phase: "creating", current: 5, active: 4, draining: -1,
				reconciled: time.Date(2026, 11, 24, 8, 59, 0, 0, time.UTC),
				ready:      false, instanceReady: true,
			},
		},
		"EngineNeverReconciled": {
			trim: trimEngine, in: fresh,
			want: &engineState{
				ObjectMeta: metav1.ObjectMeta{Name: "new-x"},
				claim:      claim{namespace: "ns1", name: "new"},
				instance:   "i", replicas: 1, active: -1, draining: -1,
			},
		},
		"Instance": {
			trim: trimInstance, in: instance,
			want: &instanceState{
				ObjectMeta: metav1.ObjectMeta{Name: "inst-x"},
				claim:      claim{namespace: "ns1", name: "inst"},
				id:         "acct-9", phase: "Degraded",
				conditions: make([]bool, len(instanceConditions)),
				keys:       map[v1alpha1.SigningKeyPhase]int64{v1alpha1.SigningKeyActive: 1},
			},
		},
		"StatefulSet": {
			trim: trimStatefulSet, in: set,
			want: &statefulSetState{
				ObjectMeta: metav1.ObjectMeta{Name: "demo-g5", Namespace: "ns1"},
				engine:     "demo", generation: "5", replicas: 3, ready: 2,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.trim(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, unexported); diff != "" {
				t.Errorf("trimmed (-want +got):\n%s", diff)
			}
			again, err := tc.trim(got)
			if err != nil || again != got {
				t.Errorf("trimming a trimmed object: got %v, %v; want it back unchanged", again, err)
			}
		})
	}
}

// TestCacheHoldsTrimmedObjects: what the running informers store is the
// trimmed values, never the objects the API returned.
func TestCacheHoldsTrimmedObjects(t *testing.T) {
	c := start(t, world())
	for what, objs := range map[string][]any{
		"engines": c.engines.GetStore().List(), "instances": c.instances.GetStore().List(), "statefulsets": c.statefulSets.GetStore().List(),
	} {
		if len(objs) == 0 {
			t.Errorf("no %s cached", what)
		}
		for _, o := range objs {
			switch o.(type) {
			case *engineState, *instanceState, *statefulSetState:
			default:
				t.Errorf("the %s cache holds a %T", what, o)
			}
		}
	}
}
