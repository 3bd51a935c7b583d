package wakestamp

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
)

// TestPatch: the value is RFC 3339 in UTC to the second, which the
// function's stamp reader accepts; a local zone and a fraction of a second
// are normalised away.
func TestPatch(t *testing.T) {
	at := time.Date(2026, 3, 1, 13, 4, 5, 999_000_000, time.FixedZone("CET", 3600))
	got, err := Patch(at)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"annotations":{"firebolt.io/wake-requested":"2026-03-01T12:04:05Z"}}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	if _, err := time.Parse(time.RFC3339, Value(at)); err != nil {
		t.Errorf("Value(%s) = %q is not RFC 3339: %v", at, Value(at), err)
	}
}

// TestClaimStamper: one merge patch of the named claim in the stamper's
// namespace, which leaves the claim's other annotations alone.
func TestClaimStamper(t *testing.T) {
	claim := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngine",
		"metadata": map[string]any{"name": "demo", "namespace": "firebolt", "annotations": map[string]any{"team": "data"}},
	}}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), claim)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := (ClaimStamper{Client: dyn, Namespace: "firebolt"}).Stamp(t.Context(), "demo", at); err != nil {
		t.Fatal(err)
	}
	got, err := dyn.Resource(EngineResource).Namespace("firebolt").Get(t.Context(), "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"team": "data", autostop.WakeAnnotation: "2026-03-01T12:00:00Z"}
	if diff := cmp.Diff(want, got.GetAnnotations()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	var patches int
	for _, a := range dyn.Actions() {
		if _, ok := a.(k8stesting.PatchAction); ok {
			patches++
		}
	}
	if patches != 1 {
		t.Errorf("%d patches, want 1", patches)
	}
}
