package instance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite/compositetest"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// adoptedRNs are the objects a migrated instance adopts.
var adoptedRNs = []string{"postgres", "metadata-config", "metadata", "gateway-config", "gateway"}

// migratedXR is the composite of an instance claim kubectl firebolt
// migrate applied.
func migratedXR(t *testing.T, spec, status string) obj {
	t.Helper()
	return xr(t, spec, status).with(t, "metadata.annotations", map[string]any{contract.AnnotationMigratedFrom: contract.MigratedFromOriginal})
}

// originalObjects are the original operator's workloads and their
// ConfigMaps as a migration leaves them: what this product renders, but
// with what the original renders otherwise (an annotation and a pod
// template annotation of its own, a gateway of three replicas), server
// fields, and no owner.
func originalObjects(t *testing.T) map[string]obj {
	t.Helper()
	running := observedRunning(t)
	out := map[string]obj{}
	for _, rn := range adoptedRNs {
		out[rn] = running[rn].with(t,
			"metadata.annotations", map[string]any{"firebolt.io/original": "kept"},
			"metadata.uid", "uid-"+rn, "metadata.resourceVersion", "7",
			"metadata.managedFields", []any{map[string]any{"manager": "kube-controller-manager", "operation": "Update"}},
		)
	}
	for _, rn := range []string{"postgres", "metadata", "gateway"} {
		out[rn] = out[rn].with(t, "spec.template.metadata.annotations", map[string]any{"original/restarted-at": "2026-01-01"})
	}
	out["gateway"] = out["gateway"].with(t, "spec.replicas", 3)
	return out
}

// existingDatabase is what Crossplane hands in for the credentials Secret
// and the volume of the original's PostgreSQL.
func existingDatabase(t *testing.T) map[string][]obj {
	t.Helper()
	return map[string][]obj{
		"postgres-credentials": {wantPostgresSecret(t, password).with(t, "metadata.uid", "uid-secret")},
		"postgres-volume":      {parse(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data-demo-metadata-pg-0, namespace: firebolt}}`)},
	}
}

func run(t *testing.T, r request) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := function(noPassword(t)).RunFunction(context.Background(), r.build(t))
	if err != nil {
		t.Fatal(err)
	}
	return rsp
}

// desiredOf is a desired object as plain JSON values.
func desiredOf(rsp *fnv1.RunFunctionResponse, rn string) map[string]any {
	if r, ok := rsp.GetDesired().GetResources()[rn]; ok {
		return r.GetResource().AsMap()
	}
	return nil
}

func adoptedStatus(rsp *fnv1.RunFunctionResponse) map[string]any {
	st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	a, _ := st["adopted"].(map[string]any)
	return a
}

func reasons(rsp *fnv1.RunFunctionResponse) []string {
	out := make([]string, 0, len(rsp.GetResults()))
	for _, r := range rsp.GetResults() {
		out = append(out, r.GetReason())
	}
	return out
}

// TestAdoptOriginalComponents follows a migrated instance through
// adoption: nothing of its workloads is applied until Crossplane has
// fetched what runs; then what runs is recorded and applied as it is
// (no pod template changes, so no pod restarts); it is applied as
// recorded while the spec stays; a spec change renders it.
func TestAdoptOriginalComponents(t *testing.T) {
	live := originalObjects(t)

	// Crossplane has not fetched anything yet.
	first := run(t, request{xr: migratedXR(t, defaultSpec, "")})
	for _, rn := range adoptedRNs {
		if desiredOf(first, rn) != nil {
			t.Errorf("%s is applied before the live one was fetched: its pods would restart", rn)
		}
		if _, ok := first.GetRequirements().GetResources()["adopt-"+rn]; !ok {
			t.Errorf("the live %s is not asked for", rn)
		}
	}

	// It has: the live objects are what is applied.
	required := existingDatabase(t)
	for _, rn := range adoptedRNs {
		required["adopt-"+rn] = []obj{live[rn]}
	}
	second := run(t, request{xr: migratedXR(t, defaultSpec, ""), required: required})
	for _, rn := range adoptedRNs {
		want := compositetest.AsJSON(t, composite.Unchanged(live[rn]))
		if diff := cmp.Diff(want, compositetest.AsJSON(t, desiredOf(second, rn))); diff != "" {
			t.Errorf("%s applied at adoption (-live +desired):\n%s", rn, diff)
		}
	}
	adopted := adoptedStatus(second)
	if adopted == nil || adopted["specHash"] == "" || adopted["objects"] == "" {
		t.Fatalf("status.adopted = %v, want the adopted objects and the spec's hash", adopted)
	}
	if got := reasons(second); !strings.Contains(strings.Join(got, ","), "Adopted") {
		t.Errorf("results %v, want an Adopted event", got)
	}

	// Crossplane's first apply was cut short by an error: the live objects
	// are observed as composed (the migration stamped their names), but no
	// status was written. They are still what is applied.
	cutShort := map[string]obj{}
	for _, rn := range adoptedRNs {
		cutShort[rn] = live[rn].with(t, "metadata.annotations", map[string]any{"crossplane.io/composition-resource-name": rn})
	}
	again := run(t, request{xr: migratedXR(t, defaultSpec, ""), observed: cutShort, required: required})
	for _, rn := range adoptedRNs {
		if diff := cmp.Diff(compositetest.AsJSON(t, desiredOf(second, rn)), compositetest.AsJSON(t, desiredOf(again, rn))); diff != "" {
			t.Errorf("%s applied after a first apply cut short (-adopted +now):\n%s", rn, diff)
		}
	}

	// The next calls apply them as recorded, with the live objects now
	// composed.
	observed := observedRunning(t)
	for _, rn := range adoptedRNs {
		observed[rn] = live[rn].with(t, "metadata.annotations", map[string]any{"crossplane.io/composition-resource-name": rn})
	}
	statusYAML := func(a map[string]any) string {
		return `{adopted: {specHash: "` + a["specHash"].(string) + `", objects: "` + a["objects"].(string) + `"}}`
	}
	third := run(t, request{xr: migratedXR(t, defaultSpec, statusYAML(adopted)), observed: observed})
	for _, rn := range adoptedRNs {
		if diff := cmp.Diff(desiredOf(second, rn), desiredOf(third, rn)); diff != "" {
			t.Errorf("%s applied once adopted (-at adoption +now):\n%s", rn, diff)
		}
	}
	if diff := cmp.Diff(adopted, adoptedStatus(third)); diff != "" {
		t.Errorf("status.adopted changed (-before +after):\n%s", diff)
	}

	// A spec change renders the components from it.
	edited := `{metadata: {}, gateway: {replicas: 4}}`
	fourth := run(t, request{xr: migratedXR(t, edited, statusYAML(adopted)), observed: observed})
	if adoptedStatus(fourth) != nil {
		t.Error("status.adopted kept after the spec changed")
	}
	if r, _, _ := unstructured.NestedFloat64(desiredOf(fourth, "gateway"), "spec", "replicas"); r != 4 {
		t.Errorf("gateway replicas after the spec changed = %v, want 4 (rendered)", r)
	}
	if got := reasons(fourth); !strings.Contains(strings.Join(got, ","), "AdoptionEnded") {
		t.Errorf("results %v, want AdoptionEnded", got)
	}
}

// TestAdoptedStatusIsChecked: status.adopted is replayed only when every
// object in it is what the instance adopts (kind, name, its component's
// pods, nothing the pod-security allow-list refuses); otherwise it is
// dropped with a Warning and the components are rendered.
func TestAdoptedStatusIsChecked(t *testing.T) {
	live := originalObjects(t)
	required := existingDatabase(t)
	for _, rn := range adoptedRNs {
		required["adopt-"+rn] = []obj{live[rn]}
	}
	// The spec's hash, as an adoption records it: a tampered recording is
	// refused for what it holds, not for a spec that moved on.
	hash, _ := adoptedStatus(run(t, request{xr: migratedXR(t, defaultSpec, ""), required: required}))["specHash"].(string)
	cases := map[string]func(o map[string]any){
		"AnotherName": func(o map[string]any) { o["metadata"].(map[string]any)["name"] = "payroll" },
		"OtherPods": func(o map[string]any) {
			o["spec"].(map[string]any)["selector"] = map[string]any{"matchLabels": map[string]any{"app": "payroll"}}
		},
		"Privileged": func(o map[string]any) {
			c := o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["securityContext"] = map[string]any{"privileged": true}
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			objs := map[string]any{}
			for _, rn := range adoptedRNs {
				objs[rn] = composite.Unchanged(live[rn])
			}
			tamper(objs["metadata"].(map[string]any))
			b, err := json.Marshal(objs)
			if err != nil {
				t.Fatal(err)
			}
			xrObj := migratedXR(t, defaultSpec, "").with(t, "status", map[string]any{"adopted": map[string]any{"specHash": hash, "objects": composite.Pack(b)}})
			rsp := run(t, request{xr: xrObj, observed: observedRunning(t)})
			if adoptedStatus(rsp) != nil {
				t.Error("a tampered status.adopted is kept")
			}
			if got := reasons(rsp); !strings.Contains(strings.Join(got, ","), "AdoptionRejected") {
				t.Errorf("results %v, want AdoptionRejected", got)
			}
			if d := desiredOf(rsp, "metadata"); d != nil && cmp.Equal(d, objs["metadata"]) {
				t.Error("the tampered Deployment is applied")
			}
		})
	}
}
