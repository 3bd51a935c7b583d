package engine

import (
	"sort"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func testConfig(t testing.TB) v1beta1.Resolved {
	t.Helper()
	cfg, err := (&v1beta1.Input{}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// testInputs is an engine "demo" in namespace "firebolt" with 2 replicas
// and a ready instance "inst", in the given phase, with nothing observed.
func testInputs(t testing.TB, phase v1alpha1.EnginePhase, current, active int) Inputs {
	t.Helper()
	return Inputs{
		Composite: CompositeMeta{Name: "demo-x7k2p", UID: "xr-uid"},
		Engine:    "demo",
		Namespace: "firebolt",
		Spec:      v1alpha1.FireboltEngineSpec{InstanceRef: "inst", Replicas: 2},
		Status: v1alpha1.FireboltEngineStatus{
			Phase: phase, CurrentGeneration: current, ActiveGeneration: active, ObservedGeneration: 2,
			LastReconciled: &metav1.Time{Time: testNow.Add(-time.Hour)},
		},
		// The claim is at generation 3, its spec the composite's; the
		// composite's own generation (4) is further on, as Crossplane's
		// reference writes leave it.
		Claim:      claimgen.Claim{Resolved: true, Found: true, Generation: 3, SpecMatches: true},
		Renderings: map[int]Recording{},
		Observed:   map[resource.Name]*ObservedObject{},
		Instance:   readyInstance(),
		Config:     testConfig(t),
	}
}

func readyInstance() InstanceRef {
	return InstanceRef{
		Name: "inst", Resolved: true, Found: true,
		Spec: v1alpha1.FireboltInstanceSpec{ID: "01JINSTANCEID"},
		Status: v1alpha1.FireboltInstanceStatus{
			MetadataReady: true, MetadataEndpoint: "inst-metadata.firebolt.svc.cluster.local:7000",
		},
	}
}

// renderFor renders generation gen of in's engine as spec asks, with in's
// instance and class.
func renderFor(in Inputs, gen int, spec v1alpha1.FireboltEngineSpec) Recording {
	in.Spec = spec
	inst := evaluateInstance(in)
	return record(gen, renderGeneration(renderInput{
		Engine: in.Engine, Namespace: in.Namespace, Gen: gen, Spec: spec, Class: in.classSpec(),
		InstanceID: inst.ID, MetadataEndpoint: inst.MetadataEndpoint,
		CustomConfig: effectiveCustomConfig(spec, in.classSpec()), Images: in.Config.Images,
		Phased: effectivePolicy(spec, in.classSpec()).Rollout == v1alpha1.RolloutPhased,
		Auth:   inst.Auth,
	})).encoded()
}

// pods says what an observed StatefulSet's status reports.
type pods struct{ created, ready int64 }

// withRecording records generation gen as rendered from spec, without
// objects.
func withRecording(in *Inputs, gen int, spec v1alpha1.FireboltEngineSpec) Recording {
	rec := renderFor(*in, gen, spec)
	in.Renderings[gen] = rec
	in.Status.Renderings = statusRenderings(in.Renderings)
	return rec
}

// withGeneration records generation gen as rendered from spec and observes
// its objects as the API server returns them: with defaults, metadata and a
// status whose pods are p.
func withGeneration(in *Inputs, gen int, spec v1alpha1.FireboltEngineSpec, p pods) {
	rec := withRecording(in, gen, spec)
	for _, s := range generationSuffixes {
		in.Observed[resourceName(gen, s)] = observe(rec.Objects.bySuffix(s), gen, s, p)
	}
}

// observe dresses a rendered object as the API server returns it.
func observe(obj map[string]any, gen int, suffix string, p pods) *ObservedObject {
	u := &unstructured.Unstructured{Object: deepCopy(obj)}
	u.SetUID(types.UID("uid-g" + strconv.Itoa(gen) + "-" + suffix))
	u.SetGeneration(1)
	u.SetResourceVersion("42")
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["crossplane.io/composition-resource-name"] = string(resourceName(gen, suffix))
	u.SetAnnotations(ann)
	switch suffix {
	case suffixStatefulSet:
		// API-server defaults, which must never count as drift.
		_ = unstructured.SetNestedField(u.Object, int64(10), "spec", "revisionHistoryLimit")
		_ = unstructured.SetNestedMap(u.Object, map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": int64(0)}}, "spec", "updateStrategy")
		_ = unstructured.SetNestedField(u.Object, "ClusterFirst", "spec", "template", "spec", "dnsPolicy")
		_ = unstructured.SetNestedField(u.Object, "Always", "spec", "template", "spec", "restartPolicy")
		_ = unstructured.SetNestedField(u.Object, "default-scheduler", "spec", "template", "spec", "schedulerName")
		_ = unstructured.SetNestedMap(u.Object, map[string]any{
			"observedGeneration": int64(1), "replicas": p.created, "readyReplicas": p.ready,
			"currentReplicas": p.created, "updatedReplicas": p.created,
		}, "status")
	case suffixHeadless:
		_ = unstructured.SetNestedField(u.Object, "SingleStack", "spec", "ipFamilyPolicy")
		_ = unstructured.SetNestedStringSlice(u.Object, []string{"None"}, "spec", "clusterIPs")
	}
	return &ObservedObject{m: u.Object}
}

// withRoute observes the routing Service selecting gen.
func withRoute(in *Inputs, gen int) {
	u := &unstructured.Unstructured{Object: RenderRoutingService(Routing{Engine: in.Engine, Namespace: in.Namespace, Gen: gen, Instance: in.Spec.InstanceRef, ObservedAuthHash: in.Status.ObservedAuthHash})}
	u.SetUID("uid-service")
	in.Observed[RoutingServiceKey] = &ObservedObject{m: u.Object}
}

// summary is the part of a Plan the phase-machine tests assert: every
// decision, without the rendered objects' content (render tests diff
// those whole).
type summary struct {
	Phase              v1alpha1.EnginePhase
	Current, Active    int
	Draining           *int
	ObservedGeneration int64
	Renderings         []int
	// Resources maps each desired resource-name to its readiness.
	Resources map[resource.Name]bool
	// Route is the generation the desired routing Service selects, -1
	// when none is desired.
	Route         int
	EngineReady   string
	InstanceReady string
	Ready         bool
	Events        []string
	TTL           time.Duration
}

func summarize(p Plan) summary {
	s := summary{
		Phase: p.Status.Phase, Current: p.Status.CurrentGeneration, Active: p.Status.ActiveGeneration,
		Draining: p.Status.DrainingGeneration, ObservedGeneration: p.Status.ObservedGeneration,
		Resources: map[resource.Name]bool{}, Route: -1, Ready: p.Ready, TTL: p.TTL,
	}
	for _, r := range p.Status.Renderings {
		s.Renderings = append(s.Renderings, r.Generation)
	}
	for n, o := range p.Resources {
		s.Resources[n] = o.Ready
	}
	if svc, ok := p.Resources[RoutingServiceKey]; ok {
		s.Route = routedGeneration(&ObservedObject{m: svc.Object})
	}
	for _, c := range p.Conditions {
		v := string(c.Status) + "/" + c.Reason
		switch c.Type {
		case TypeEngineReady:
			s.EngineReady = v
		case TypeInstanceReady:
			s.InstanceReady = v
		}
	}
	for _, r := range p.Results {
		s.Events = append(s.Events, r.Reason)
	}
	sort.Strings(s.Events)
	return s
}

// gen lists a generation's resource-names with one readiness.
func gen(n int, stsReady, othersReady bool) map[resource.Name]bool {
	return map[resource.Name]bool{
		resourceName(n, suffixConfig):      othersReady,
		resourceName(n, suffixHeadless):    othersReady,
		resourceName(n, suffixStatefulSet): stsReady,
	}
}

// merge joins resource readiness maps.
func merge(ms ...map[resource.Name]bool) map[resource.Name]bool {
	out := map[resource.Name]bool{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func route(ready bool) map[resource.Name]bool {
	return map[resource.Name]bool{RoutingServiceKey: ready}
}

// binding is the binding to class c that an engine naming it composes.
func binding(c string, ready bool) map[resource.Name]bool {
	return map[resource.Name]bool{BindingResourceName(c): ready}
}

func intp(i int) *int { return &i }
