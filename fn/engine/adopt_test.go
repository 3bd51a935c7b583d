package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite/compositetest"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// originalGeneration is generation gen of in's engine as the original
// operator made it and the API server returns it once a migration has
// released it: a rendering that differs from this function's (an
// annotation and an environment variable of its own), the generation's
// labels and one more, server fields, no owner.
func originalGeneration(t *testing.T, in Inputs, gen int) map[string]*unstructured.Unstructured {
	t.Helper()
	rec := renderFor(in, gen, in.Spec)
	live := map[string]*unstructured.Unstructured{}
	for _, s := range generationSuffixes {
		u := &unstructured.Unstructured{Object: observe(rec.Objects.bySuffix(s), gen, s, pods{created: 2, ready: 2}).m}
		ann := u.GetAnnotations()
		delete(ann, "crossplane.io/composition-resource-name")
		ann["firebolt.io/original"] = "kept"
		ann["kubectl.kubernetes.io/last-applied-configuration"] = `{"dropped":true}`
		u.SetAnnotations(ann)
		l := u.GetLabels()
		l["app.kubernetes.io/managed-by"] = "firebolt-operator"
		u.SetLabels(l)
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}})
		u.SetCreationTimestamp(metav1.NewTime(testNow.Add(-72 * 3600e9)))
		live[s] = u
	}
	c, _, _ := unstructured.NestedSlice(live[suffixStatefulSet].Object, "spec", "template", "spec", "containers")
	c0 := c[0].(map[string]any)
	env, _ := c0["env"].([]any)
	c0["env"] = append(env, map[string]any{"name": "ORIGINAL_ONLY", "value": "1"})
	if err := unstructured.SetNestedSlice(live[suffixStatefulSet].Object, c, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	return live
}

func adopting(t *testing.T, gen int) Inputs {
	t.Helper()
	in := testInputs(t, "", 0, 0)
	in.Adopt = Adoption{Asked: true, Generation: gen, Resolved: true, Live: originalGeneration(t, in, gen)}
	return in
}

// TestAdoptRecordsTheLiveGeneration: the first call of a migrated engine
// records the original's generation as it runs (its pod template
// untouched, server fields and foreign metadata left out), with the hash
// this function renders for the spec beside it, and moves to creating that
// generation. Nothing is applied in that call.
func TestAdoptRecordsTheLiveGeneration(t *testing.T) {
	in := adopting(t, 3)
	p := Compute(in, Signals{}, testNow)
	want := summary{
		Phase: v1alpha1.EnginePhaseCreating, Current: 3, Active: -1, ObservedGeneration: 2, Renderings: []int{3},
		Resources: map[resource.Name]bool{}, Route: -1, EngineReady: "False/Initializing", InstanceReady: "True/InstanceReady",
		Events: []string{"Adopted"}, TTL: ttlProgress,
	}
	if diff := cmp.Diff(want, summarize(p)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	r := p.Status.Renderings[0]
	if ours := renderFor(in, 3, in.Spec).Hash; r.AdoptedHash != ours || r.Hash == ours {
		t.Errorf("recorded hash %s, adopted hash %s; want the live objects' own hash and this function's rendering's %s", r.Hash, r.AdoptedHash, ours)
	}
	rec := decodeRecording(in.Engine, in.Namespace, in.Config.PodSecurity, r)
	if rec.Err != nil {
		t.Fatalf("the adopted recording does not verify: %v", rec.Err)
	}
	live := in.Adopt.Live[suffixStatefulSet]
	if diff := cmp.Diff(compositetest.AsJSON(t, live.Object["spec"]), compositetest.AsJSON(t, rec.Objects.StatefulSet["spec"])); diff != "" {
		t.Errorf("the adopted StatefulSet's spec is not the live one (-live +recorded):\n%s", diff)
	}
	for _, s := range generationSuffixes {
		obj := rec.Objects.bySuffix(s)
		if _, ok := obj["status"]; ok {
			t.Errorf("%s recorded with a status", s)
		}
		md := obj["metadata"].(map[string]any)
		want := map[string]any{
			"name": in.Adopt.Live[s].GetName(), "namespace": "firebolt",
			"labels":      map[string]any{LabelEngine: "demo", LabelGeneration: "3"},
			"annotations": map[string]any{"firebolt.io/original": "kept"},
		}
		if diff := cmp.Diff(want, md); diff != "" {
			t.Errorf("%s metadata recorded (-want +got):\n%s", s, diff)
		}
	}
}

// TestAdoptedGenerationServes: the adopted generation goes the way of any
// new one (ready, switched to, stable) and stays in effect while the spec
// is the one it was adopted under; the next spec change rolls a new
// generation.
func TestAdoptedGenerationServes(t *testing.T) {
	first := Compute(adopting(t, 3), Signals{}, testNow)
	adopted := func(phase v1alpha1.EnginePhase, active int) Inputs {
		in := testInputs(t, phase, 3, active)
		in.Status.Renderings = first.Status.Renderings
		in.Renderings = decodeRecordings(in.Engine, in.Namespace, in.Config.PodSecurity, in.Status.Renderings)
		for _, s := range generationSuffixes {
			in.Observed[resourceName(3, s)] = observe(in.Renderings[3].Objects.bySuffix(s), 3, s, pods{created: 2, ready: 2})
		}
		return in
	}

	creating := summarize(Compute(adopted(v1alpha1.EnginePhaseCreating, -1), Signals{}, testNow))
	if creating.Phase != v1alpha1.EnginePhaseSwitching || creating.Route != 3 || creating.Current != 3 {
		t.Errorf("ready adopted generation: phase %s, route %d, current %d; want switching to 3", creating.Phase, creating.Route, creating.Current)
	}

	stableIn := adopted(v1alpha1.EnginePhaseStable, 3)
	withRoute(&stableIn, 3)
	stable := summarize(Compute(stableIn, Signals{}, testNow))
	want := summary{
		Phase: v1alpha1.EnginePhaseStable, Current: 3, Active: 3, ObservedGeneration: 3, Renderings: []int{3},
		Resources: merge(gen(3, true, true), route(true)), Route: 3,
		EngineReady: "True/EngineReady", InstanceReady: "True/InstanceReady", Ready: true, TTL: stableIn.Config.StableTTL,
	}
	if diff := cmp.Diff(want, stable); diff != "" {
		t.Errorf("adopted generation at rest (-want +got):\n%s", diff)
	}

	edited := adopted(v1alpha1.EnginePhaseStable, 3)
	withRoute(&edited, 3)
	edited.Spec.Replicas = 3
	rolled := summarize(Compute(edited, Signals{}, testNow))
	if rolled.Phase != v1alpha1.EnginePhaseCreating || rolled.Current != 4 || rolled.Active != 3 {
		t.Errorf("spec edited on the adopted generation: phase %s current %d active %d; want creating generation 4 beside active 3",
			rolled.Phase, rolled.Current, rolled.Active)
	}
}

// TestAdoptionFailed: a generation that cannot be adopted is said so on
// EngineReady; nothing is recorded, applied or created, and the phase
// stays empty so that nothing replaces the original's pods.
func TestAdoptionFailed(t *testing.T) {
	cases := map[string]struct {
		mutate func(in *Inputs)
		why    string
	}{
		"Annotation": {
			mutate: func(in *Inputs) {
				in.Adopt = Adoption{Asked: true, Err: "annotation firebolt.io/adopt-generation is \"x\": …"}
			},
			why: `annotation firebolt.io/adopt-generation is "x"`,
		},
		"ConfigMapGone": {
			mutate: func(in *Inputs) { delete(in.Adopt.Live, suffixConfig) },
			why:    "ConfigMap firebolt/demo-g3-config not found: the original's generation 3 is gone; to start afresh instead, remove the annotation firebolt.io/adopt-generation",
		},
		"NotTheOriginals": {
			mutate: func(in *Inputs) { in.Adopt.Live[suffixHeadless].SetLabels(map[string]string{LabelEngine: "demo"}) },
			why:    `Service firebolt/demo-g3-hl has label firebolt.io/generation="", want "3"`,
		},
		"SelectsOtherPods": {
			mutate: func(in *Inputs) {
				_ = unstructured.SetNestedStringMap(in.Adopt.Live[suffixStatefulSet].Object, map[string]string{"app": "payroll"}, "spec", "selector", "matchLabels")
			},
			why: "the original's generation 3 cannot be adopted: statefulset selector map[app:payroll]",
		},
		"PrivilegedPods": {
			mutate: func(in *Inputs) {
				c, _, _ := unstructured.NestedSlice(in.Adopt.Live[suffixStatefulSet].Object, "spec", "template", "spec", "containers")
				c[0].(map[string]any)["securityContext"] = map[string]any{"privileged": true}
				_ = unstructured.SetNestedSlice(in.Adopt.Live[suffixStatefulSet].Object, c, "spec", "template", "spec", "containers")
			},
			why: "privileged",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := adopting(t, 3)
			tc.mutate(&in)
			p := Compute(in, Signals{}, testNow)
			s := summarize(p)
			if s.Phase != "" || len(s.Renderings) != 0 || len(s.Resources) != 0 || s.Active != -1 || s.EngineReady != "False/"+ReasonAdoptionFailed {
				t.Errorf("plan: %+v; want phase empty, nothing recorded or composed, EngineReady False/AdoptionFailed", s)
			}
			for _, c := range p.Conditions {
				if c.Type == TypeEngineReady && !strings.Contains(c.Message, tc.why) {
					t.Errorf("EngineReady message %q does not say %q", c.Message, tc.why)
				}
			}
		})
	}
}

// TestAdoptionWaits: before Crossplane has fetched the objects, and while
// the instance is not ready (the hash of what the spec renders needs it),
// the adoption waits without failing.
func TestAdoptionWaits(t *testing.T) {
	unresolved := adopting(t, 3)
	unresolved.Adopt.Resolved = false
	s := summarize(Compute(unresolved, Signals{}, testNow))
	if s.Phase != "" || len(s.Renderings) != 0 || s.EngineReady != "False/Initializing" || s.TTL != ttlProgress {
		t.Errorf("objects not fetched yet: %+v; want to wait, Initializing, called again at once", s)
	}
	notReady := adopting(t, 3)
	notReady.Instance.Status.MetadataReady = false
	s = summarize(Compute(notReady, Signals{}, testNow))
	if s.Phase != "" || len(s.Renderings) != 0 || s.EngineReady != "False/"+ReasonInstanceNotReady {
		t.Errorf("instance not ready: %+v; want to wait with InstanceNotReady", s)
	}
}

// TestAdoptedHashFromStatus: status.renderings carries adoptedHash when it
// has a hash's shape, and drops it otherwise; the recording itself is
// still trusted on its own content.
func TestAdoptedHashFromStatus(t *testing.T) {
	first := Compute(adopting(t, 3), Signals{}, testNow)
	r := first.Status.Renderings[0]
	for _, tc := range []struct{ adopted, want string }{
		{r.AdoptedHash, r.AdoptedHash},
		{"not-a-hash", ""},
		{strings.Repeat("f", 64), ""},
	} {
		rs := []v1alpha1.GenerationRendering{{Generation: 3, Hash: r.Hash, AdoptedHash: tc.adopted, Objects: r.Objects}}
		got := decodeRecordings("demo", "firebolt", testConfig(t).PodSecurity, rs)[3]
		if got.Err != nil || got.AdoptedHash != tc.want {
			t.Errorf("adoptedHash %q read as %q (err %v), want %q", tc.adopted, got.AdoptedHash, got.Err, tc.want)
		}
	}
}

// TestAdoptedNamesAreTheComposedOnes: the names kubectl firebolt migrate
// stamps on the original's objects are the composition resource names and
// object names this function composes them under.
func TestAdoptedNamesAreTheComposedOnes(t *testing.T) {
	want := contract.AdoptedNames{}
	in := testInputs(t, v1alpha1.EnginePhaseStable, 3, 3)
	rec := renderFor(in, 3, in.Spec)
	resources := map[string]string{"StatefulSet": "statefulsets", "Service": "services", "ConfigMap": "configmaps"}
	for _, s := range generationSuffixes {
		u := unstructured.Unstructured{Object: rec.Objects.bySuffix(s)}
		want[resources[u.GetKind()]+"/"+u.GetName()] = string(resourceName(3, s))
	}
	svc := unstructured.Unstructured{Object: RenderRoutingService(Routing{Engine: "demo", Namespace: "firebolt", Gen: 3})}
	want["services/"+svc.GetName()] = string(RoutingServiceKey)
	if diff := cmp.Diff(want, contract.EngineAdoptedNames("demo", 3)); diff != "" {
		t.Errorf("contract.EngineAdoptedNames (-composed +contract):\n%s", diff)
	}
}
