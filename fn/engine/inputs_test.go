package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRead(t *testing.T) {
	xr := func(labels map[string]any, classRef string) map[string]any {
		spec := map[string]any{"instanceRef": "inst", "replicas": float64(2), "claimRef": map[string]any{"name": "demo"},
			"customEngineConfig": map[string]any{"storage": map[string]any{"bucket": "b"}}}
		if classRef != "" {
			spec["engineClassRef"] = classRef
		}
		return map[string]any{
			"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "XFireboltEngine",
			"metadata": map[string]any{"name": "demo-x", "uid": "xr-uid", "generation": float64(7), "labels": labels},
			"spec":     spec,
			"status":   map[string]any{"phase": "stable", "currentGeneration": float64(2), "activeGeneration": float64(2), "conditions": []any{}},
		}
	}
	claim := map[string]any{"crossplane.io/claim-name": "demo", "crossplane.io/claim-namespace": "firebolt"}
	instance := func(name string) *fnv1.Resource {
		return &fnv1.Resource{Resource: mustStruct(t, map[string]any{
			"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltInstance",
			"metadata": map[string]any{"name": name, "namespace": "firebolt"},
			"spec":     map[string]any{"id": "ID", "metadataNG": false, "compositionRef": map[string]any{"name": "x"}},
			"status":   map[string]any{"metadataReady": true, "metadataEndpoint": "ep:7000"},
		})}
	}
	type view struct {
		Composite         CompositeMeta
		Engine, Namespace string
		Replicas          int32
		CustomConfig      string
		Phase             v1alpha1.EnginePhase
		Instance          InstanceRef
		Class             ClassRef
		Observed          []resource.Name
	}
	classSpec := func(data map[string]any) *fnv1.Resources {
		return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: mustStruct(t, map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "big-engineclass", "namespace": "firebolt"},
			"data":     data,
		})}}}
	}
	classClaim := &fnv1.Resources{Items: []*fnv1.Resource{{Resource: mustStruct(t, map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngineClass",
		"metadata": map[string]any{"name": "big", "namespace": "firebolt"},
		"spec":     map[string]any{"template": map[string]any{}},
	})}}}
	withClass := func(req map[string]*fnv1.Resources) *fnv1.RunFunctionRequest {
		return &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr(claim, "big"))}}, RequiredResources: req}
	}
	base := view{
		Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"}, Engine: "demo", Namespace: "firebolt",
		Replicas: 2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable", Instance: InstanceRef{Name: "inst"},
	}
	withRef := func(c ClassRef) view { v := base; v.Class = c; return v }

	cases := map[string]struct {
		req  *fnv1.RunFunctionRequest
		want view
	}{
		"NothingRequiredYet": {
			req: &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr(claim, ""))}}},
			want: view{
				Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"}, Engine: "demo", Namespace: "firebolt",
				Replicas: 2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable", Instance: InstanceRef{Name: "inst"},
			},
		},
		"InstanceNotFound": {
			req: &fnv1.RunFunctionRequest{
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr(claim, ""))}},
				RequiredResources: map[string]*fnv1.Resources{"instance-state": {}, "instance": {}},
			},
			want: view{
				Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"}, Engine: "demo", Namespace: "firebolt",
				Replicas: 2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable", Instance: InstanceRef{Name: "inst", StateResolved: true, Resolved: true},
			},
		},
		"StaleRequirementIsNotTheInstance": {
			req: &fnv1.RunFunctionRequest{
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr(claim, ""))}},
				RequiredResources: map[string]*fnv1.Resources{"instance-state": {}, "instance": {Items: []*fnv1.Resource{instance("other")}}},
			},
			want: view{
				Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"}, Engine: "demo", Namespace: "firebolt",
				Replicas: 2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable", Instance: InstanceRef{Name: "inst", StateResolved: true, Resolved: true},
			},
		},
		"InstanceAndClassFoundObservedResources": {
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{
					Composite: &fnv1.Resource{Resource: mustStruct(t, xr(claim, "big"))},
					Resources: map[string]*fnv1.Resource{
						"g2-statefulset": {Resource: mustStruct(t, map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet"})},
						"service":        {Resource: mustStruct(t, map[string]any{"apiVersion": "v1", "kind": "Service"})},
					},
				},
				RequiredResources: map[string]*fnv1.Resources{"instance-state": {}, "instance": {Items: []*fnv1.Resource{instance("inst")}},
					"class-spec": classSpec(map[string]any{"spec": `{"template": {}, "rollout": "recreate"}`})},
			},
			want: view{
				Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"}, Engine: "demo", Namespace: "firebolt",
				Replicas: 2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable",
				Instance: InstanceRef{Name: "inst", StateResolved: true, Resolved: true, Found: true,
					Spec:   v1alpha1.FireboltInstanceSpec{ID: "ID"},
					Status: v1alpha1.FireboltInstanceStatus{MetadataReady: true, MetadataEndpoint: "ep:7000"}},
				Class: ClassRef{Name: "big", Resolved: true, Found: true, SpecResolved: true, Published: true,
					Spec: v1alpha1.FireboltEngineClassSpec{Rollout: "recreate"}},
				Observed: []resource.Name{"g2-statefulset", "service"},
			},
		},
		// The instance publishes what engines read in its ConfigMap: the
		// claim is not read even when Crossplane still hands it in.
		"InstanceFromItsConfigMap": {
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr(claim, ""))}},
				RequiredResources: map[string]*fnv1.Resources{
					"instance-state": stateConfigMap(t, map[string]any{"instance": `{"specID":"ID","metricScrapeMode":"direct","id":"ACCT","metadataReady":true,"metadataEndpoint":"ep:7000","authReady":{"type":"AuthReady","status":"True","reason":"Disabled"}}`}),
					"instance":       {Items: []*fnv1.Resource{instance("inst")}},
				},
			},
			want: view{
				Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"}, Engine: "demo", Namespace: "firebolt",
				Replicas: 2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable",
				Instance: InstanceRef{Name: "inst", StateResolved: true, Published: true, Resolved: true, Found: true,
					Spec:      v1alpha1.FireboltInstanceSpec{ID: "ID", MetricScrapeMode: "direct"},
					Status:    v1alpha1.FireboltInstanceStatus{ID: "ACCT", MetadataReady: true, MetadataEndpoint: "ep:7000"},
					AuthReady: &Condition{Type: "AuthReady", Status: "True", Reason: "Disabled"}},
			},
		},
		"InstanceConfigMapUnreadable": {
			req: &fnv1.RunFunctionRequest{
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr(claim, ""))}},
				RequiredResources: map[string]*fnv1.Resources{"instance-state": stateConfigMap(t, map[string]any{"instance": `{"metadataReady": "yes"`})},
			},
			want: view{
				Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"}, Engine: "demo", Namespace: "firebolt",
				Replicas: 2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable",
				Instance: InstanceRef{Name: "inst", StateResolved: true, Published: true, Resolved: true, Found: true,
					Err: "cannot decode data.instance of its ConfigMap: unexpected end of JSON input"},
			},
		},
		"InstanceCannotPublish": {
			req: &fnv1.RunFunctionRequest{
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr(claim, ""))}},
				RequiredResources: map[string]*fnv1.Resources{"instance-state": stateConfigMap(t, map[string]any{"error": "FireboltInstance firebolt/inst cannot publish its state for engines: too big"})},
			},
			want: view{
				Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"}, Engine: "demo", Namespace: "firebolt",
				Replicas: 2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable",
				Instance: InstanceRef{Name: "inst", StateResolved: true, Published: true, Resolved: true, Found: true,
					Err: "FireboltInstance firebolt/inst cannot publish its state for engines: too big"},
			},
		},
		"ClassSpecNotFetchedYet": {
			req:  withClass(nil),
			want: withRef(ClassRef{Name: "big"}),
		},
		"ClassSpecMissingClaimNotFetchedYet": {
			req:  withClass(map[string]*fnv1.Resources{"class-spec": {}}),
			want: withRef(ClassRef{Name: "big", SpecResolved: true}),
		},
		"ClassSpecMissingClaimFound": {
			req:  withClass(map[string]*fnv1.Resources{"class-spec": {}, "class": classClaim}),
			want: withRef(ClassRef{Name: "big", SpecResolved: true, Resolved: true, Found: true}),
		},
		"ClassSpecMissingClaimMissing": {
			req:  withClass(map[string]*fnv1.Resources{"class-spec": {}, "class": {}}),
			want: withRef(ClassRef{Name: "big", SpecResolved: true, Resolved: true}),
		},
		"ClassSpecUndecodable": {
			req: withClass(map[string]*fnv1.Resources{"class-spec": classSpec(map[string]any{"spec": `{"rollout": 3}`})}),
			want: withRef(ClassRef{Name: "big", SpecResolved: true, Resolved: true, Found: true, Published: true,
				Err: "cannot decode its spec: json: cannot unmarshal number into Go struct field FireboltEngineClassSpec.rollout of type v1alpha1.RolloutStrategy"}),
		},
		"ClassSpecWithoutItsKey": {
			req: withClass(map[string]*fnv1.Resources{"class-spec": classSpec(map[string]any{"other": "x"})}),
			want: withRef(ClassRef{Name: "big", SpecResolved: true, Resolved: true, Found: true, Published: true,
				Err: "cannot decode its spec: ConfigMap big-engineclass has no data.spec"}),
		},
		"ClassSpecNotPublishable": {
			req: withClass(map[string]*fnv1.Resources{"class-spec": classSpec(map[string]any{"error": "spec is 1048647 bytes as JSON, more than the 1048572 a ConfigMap holds"})}),
			want: withRef(ClassRef{Name: "big", SpecResolved: true, Resolved: true, Found: true, Published: true,
				Err: "spec is 1048647 bytes as JSON, more than the 1048572 a ConfigMap holds"}),
		},
		"NoClaimLabels": {
			req: &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr(nil, ""))}}},
			want: view{
				Composite: CompositeMeta{Name: "demo-x", UID: "xr-uid"},
				Replicas:  2, CustomConfig: `{"storage":{"bucket":"b"}}`, Phase: "stable", Instance: InstanceRef{Name: "inst"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, err := Read(callFor(t, tc.req))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			got := view{Composite: in.Composite, Engine: in.Engine, Namespace: in.Namespace, Replicas: in.Spec.Replicas,
				Phase: in.Status.Phase, Instance: in.Instance, Class: in.Class}
			if in.Spec.CustomEngineConfig != nil {
				got.CustomConfig = string(in.Spec.CustomEngineConfig.Raw)
			}
			for _, n := range []resource.Name{"g2-statefulset", "service"} {
				if in.Observed[n] != nil {
					got.Observed = append(got.Observed, n)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Read: -want, +got:\n%s", diff)
			}
		})
	}
}

func TestReadRejectsAnUndecodableSpec(t *testing.T) {
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "XFireboltEngine",
		"metadata": map[string]any{"name": "demo-x"}, "spec": map[string]any{"replicas": "two"},
	})}}}
	if _, err := Read(callFor(t, req)); err == nil {
		t.Error("Read of a spec with replicas \"two\": want an error, got none")
	}
}

func TestParseResourceName(t *testing.T) {
	type parsed struct {
		Gen    int
		Suffix string
		OK     bool
	}
	cases := map[resource.Name]parsed{
		"g0-statefulset": {0, "statefulset", true},
		"g12-config":     {12, "config", true},
		"g3-headless":    {3, "headless", true},
		"service":        {},
		"g-config":       {},
		"g01-config":     {},
		"g1-other":       {},
		"g-1-config":     {},
	}
	for n, want := range cases {
		g, s, ok := parseResourceName(n)
		if diff := cmp.Diff(want, parsed{g, s, ok}); diff != "" {
			t.Errorf("parseResourceName(%q): -want, +got:\n%s", n, diff)
		}
	}
}

// callFor decodes the observed composite as the dispatcher does.
func callFor(t *testing.T, req *fnv1.RunFunctionRequest) composite.Call {
	t.Helper()
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		t.Fatal(err)
	}
	return composite.Call{Req: req, XR: oxr, Log: logging.NewNopLogger(), Config: testConfig(t)}
}

// stateConfigMap is the ConfigMap instance "inst" publishes for its engines,
// with data.
func stateConfigMap(t *testing.T, data map[string]any) *fnv1.Resources {
	t.Helper()
	return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: mustStruct(t, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "inst-engines", "namespace": "firebolt"},
		"data":     data,
	})}}}
}
