package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instancestate"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// fixedProber answers every drain check with one verdict and counts calls.
type fixedProber struct {
	verdict scrape.Verdict
	calls   int
}

func (p *fixedProber) Drain(context.Context, string, labels.Selector, scrape.Options) scrape.Verdict {
	p.calls++
	return p.verdict
}

func (p *fixedProber) Activity(context.Context, string, labels.Selector, scrape.Options) scrape.Observation {
	p.calls++
	return scrape.Observation{Err: errors.New("fixedProber samples no activity")}
}

type fixedEvents struct{ events []corev1.Event }

func (e fixedEvents) Warnings(context.Context, string, types.UID) ([]corev1.Event, error) {
	return e.events, nil
}

// loadRequest reads testdata/requests/<name>.yaml.
var loadRequest = engine.LoadRequest

func loadResponse(t *testing.T, file string) *fnv1.RunFunctionResponse {
	t.Helper()
	y, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./fn/engine -run TestRunFunction -update to create it)", err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	rsp := &fnv1.RunFunctionResponse{}
	if err := protojson.Unmarshal(j, rsp); err != nil {
		t.Fatal(err)
	}
	return rsp
}

// withClass makes the engine of a request name class big, with Crossplane
// handing in spec as the class's ConfigMap and, when not nil, claim as its
// claim.
func withClass(spec, claim *fnv1.Resources) func(*fnv1.RunFunctionRequest) {
	return func(req *fnv1.RunFunctionRequest) {
		for _, o := range []*structpb.Struct{req.GetObserved().GetComposite().GetResource(), req.GetRequiredResources()["claim"].GetItems()[0].GetResource()} {
			o.GetFields()["spec"].GetStructValue().Fields["engineClassRef"] = structpb.NewStringValue("big")
		}
		req.RequiredResources["class-spec"] = spec
		if claim != nil {
			req.RequiredResources["class"] = claim
		}
	}
}

func classSpecConfigMap() *fnv1.Resources {
	return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: resourceJSON(`{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": {"name": "big-engineclass", "namespace": "firebolt", "labels": {"firebolt.io/engine-class": "big"}},
		"data": {"spec": "{\"rollout\":\"recreate\",\"template\":{}}"}}`)}}}
}

func classClaim(bound string) *fnv1.Resources {
	return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: resourceJSON(`{"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngineClass",
		"metadata": {"name": "big", "namespace": "firebolt"}, "spec": {"template": {}, "rollout": "recreate"},
		"status": {"boundEngineNames": ` + bound + `}}`)}}}
}

func resourceJSON(s string) *structpb.Struct {
	st := &structpb.Struct{}
	if err := protojson.Unmarshal([]byte(s), st); err != nil {
		panic(err)
	}
	return st
}

// responseClock is the time every whole-response test runs at.
var responseClock = simEpoch.Add(time.Hour)

// TestRunFunction runs requests captured from a simulated rollout (see
// TestFixtures) through the whole function and diffs the complete
// responses against reviewed goldens in testdata/responses.
func TestRunFunction(t *testing.T) {
	busy := scrape.Verdict{Message: "pod demo-g0-0: 1 running, 0 suspended queries; pod demo-g0-1: 0 running, 2 suspended queries"}
	failing := scrape.Verdict{Failing: true, Message: `pod demo-g0-1: cannot scrape metrics: unexpected HTTP status 503: "error trying to reach service"`}
	// Three pods whose bodies quote kilobytes of hostile label values, with
	// multi-byte runes where the cut falls.
	hostile := `cannot parse metrics: cannot decode protobuf metrics: invalid message 2: invalid label value "` + strings.Repeat("é", 700) + `"`
	failingLong := scrape.Verdict{Failing: true, Message: "pod demo-g0-0: " + hostile + "; pod demo-g0-1: " + hostile + "; pod demo-g0-2: " + hostile}
	stuck := []corev1.Event{{
		Reason: "FailedCreate", Message: `create Pod demo-g1-0 in StatefulSet demo-g1 failed error: pods "demo-g1-0" is forbidden: exceeded quota: compute`,
		Count: 3, LastTimestamp: metav1.NewTime(simEpoch),
	}}

	cases := map[string]struct {
		request string
		mutate  func(*fnv1.RunFunctionRequest)
		verdict scrape.Verdict
		events  []corev1.Event
		// probes is how many drain checks the call must make.
		probes int
	}{
		"first-reconcile":  {request: "new"},
		"first-generation": {request: "first-generation"},
		"creating":         {request: "creating", events: stuck},
		"switching":        {request: "switching"},
		"draining-busy":    {request: "draining", verdict: busy, probes: 1},
		"draining-failing": {request: "draining", verdict: failing, probes: 1},
		// The condition message is cut at engine.MaxMessageBytes.
		"draining-failing-long": {request: "draining", verdict: failingLong, probes: 1},
		"cleaning":              {request: "cleaning"},
		"updating":              {request: "updating", verdict: scrape.Verdict{Drained: true}},
		"stable":                {request: "stable"},
		"stopped":               {request: "stopped"},
		"stable-instance-not-ready": {
			request: "stable",
			mutate: func(req *fnv1.RunFunctionRequest) {
				st := req.GetRequiredResources()["instance"].GetItems()[0].GetResource().GetFields()["status"].GetStructValue()
				st.Fields["metadataReady"] = structpb.NewBoolValue(false)
				delete(st.GetFields(), "metadataEndpoint")
			},
		},
		// The claim was edited (generation 2, three replicas) and Crossplane
		// has not synced the edit into the composite yet: generation 1
		// stays published.
		"stable-claim-edited": {
			request: "stable",
			mutate: func(req *fnv1.RunFunctionRequest) {
				c := req.GetRequiredResources()["claim"].GetItems()[0].GetResource()
				c.GetFields()["metadata"].GetStructValue().Fields["generation"] = structpb.NewNumberValue(2)
				c.GetFields()["spec"].GetStructValue().Fields["replicas"] = structpb.NewNumberValue(3)
			},
		},
		// A claim kubectl firebolt migrate made asks for the original's
		// generation 0; once Crossplane hands it in, it is recorded as it
		// runs and the engine moves to creating it.
		"adopt-asks": {request: "new", mutate: adoptingRequest(t, "0", false)},
		"adopt":      {request: "new", mutate: adoptingRequest(t, "0", true)},
		// A generation this product cannot number: nothing is asked for
		// or created, and EngineReady says why.
		"adopt-refused": {request: "new", mutate: adoptingRequest(t, "1000", true)},
		// Crossplane found no claim: no generation to vouch for.
		"stable-claim-gone": {
			request: "stable",
			mutate: func(req *fnv1.RunFunctionRequest) {
				req.GetRequiredResources()["claim"].Items = nil
			},
		},
		// The engine names class big, published in its ConfigMap: the
		// engine asks for that ConfigMap, not for the class claim, and
		// composes its binding to the class.
		"stable-class-published": {
			request: "stable",
			mutate:  withClass(classSpecConfigMap(), nil),
		},
		// Crossplane also hands in the class claim, whose status lists
		// another engine: nothing in the response depends on it, so a bind
		// (which changes only that status) changes no engine's binding.
		"stable-class-published-claim-lists-others": {
			request: "stable",
			mutate:  withClass(classSpecConfigMap(), classClaim(`["demo", "etl"]`)),
		},
		// The class claim exists but its ConfigMap is not composed yet:
		// waiting, not a default; the existing objects and the binding stay,
		// and the claim is asked for until the ConfigMap appears.
		"stable-class-unpublished": {
			request: "stable",
			mutate:  withClass(&fnv1.Resources{}, classClaim(`["demo"]`)),
		},
		// Neither the ConfigMap nor the claim exists.
		"stable-class-missing": {
			request: "stable",
			mutate:  withClass(&fnv1.Resources{}, &fnv1.Resources{}),
		},
		// The instance enables authentication: the generation that runs it
		// is created with config.yaml's instance.auth, the credential
		// volumes and mounts, and the auth-hash annotation; the engine
		// requires the admin password's Secret, of which it reads only the
		// version.
		"creating-auth": {request: "creating-auth"},
		// At rest, status.observedAuthHash and the routing Service's
		// annotation publish the hash to the instance.
		"stable-auth": {request: "stable-auth"},
		// The admin password's Secret was written: a new generation, whose
		// pods read the password afresh.
		"stable-auth-password-changed": {request: "stable-auth", mutate: withAdminSecretVersion("8")},
		// The instance minted a second signing key: a new generation that
		// validates it.
		"stable-auth-key-minted": {request: "stable-auth", mutate: withSecondSigningKey},
		// The instance's authentication is not ready: the engine keeps
		// serving what it runs, publishes what it runs, and says why.
		"stable-auth-not-ready": {request: "stable-auth", mutate: withAuthReady("False", "SigningKeyPending", "waiting for cert-manager to issue signing key signing-2")},
		// The admin password's Secret is gone: the same.
		"stable-auth-admin-secret-missing": {
			request: "stable-auth",
			mutate: func(req *fnv1.RunFunctionRequest) {
				req.GetRequiredResources()[engine.RequirementAdminSecret].Items = nil
			},
		},
		"no-claim-labels": {
			request: "stable",
			mutate: func(req *fnv1.RunFunctionRequest) {
				md := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue()
				delete(md.GetFields(), "labels")
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := loadRequest(t, tc.request)
			if tc.mutate != nil {
				tc.mutate(req)
			}
			before := proto.Clone(req)
			prober := &fixedProber{verdict: tc.verdict}
			c := engine.New(prober, fixedEvents{tc.events}, engine.WithClock(func() time.Time { return responseClock }))
			f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})

			got, err := f.RunFunction(context.Background(), req)
			if err != nil {
				t.Fatalf("RunFunction: %v", err)
			}
			file := filepath.Join("testdata", "responses", name+".yaml")
			if update() {
				golden(t, file, requestYAML(t, got))
			}
			want := loadResponse(t, file)
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("RunFunction(%s): -want, +got:\n%s", tc.request, diff)
			}
			if prober.calls != tc.probes {
				t.Errorf("drain checks: want %d, got %d", tc.probes, prober.calls)
			}
			if diff := cmp.Diff(before, req, protocmp.Transform()); diff != "" {
				t.Errorf("RunFunction modified its request: -before, +after:\n%s", diff)
			}

			// The same call with the instance read from the ConfigMap it
			// publishes (from the claim, as the instance composes it):
			// the same response, but for the requirements, which no
			// longer ask for the claim.
			viaState, ok := viaInstanceState(t, req)
			if !ok {
				return
			}
			c2 := engine.New(&fixedProber{verdict: tc.verdict}, fixedEvents{tc.events}, engine.WithClock(func() time.Time { return responseClock }))
			gotState, err := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c2}).RunFunction(context.Background(), viaState)
			if err != nil {
				t.Fatalf("RunFunction with the instance's ConfigMap: %v", err)
			}
			if r := gotState.GetRequirements().GetResources(); len(got.GetRequirements().GetResources()) > 0 && (r[engine.RequirementInstance] != nil || r[engine.RequirementInstanceState] == nil) {
				t.Errorf("with the instance's ConfigMap found, the engine requires %v: want the ConfigMap and not the claim", keysOf(r))
			}
			a, b := proto.Clone(got).(*fnv1.RunFunctionResponse), proto.Clone(gotState).(*fnv1.RunFunctionResponse)
			a.Requirements, b.Requirements = nil, nil
			if diff := cmp.Diff(a, b, protocmp.Transform()); diff != "" {
				t.Errorf("the instance read from its ConfigMap gives another response than read from its claim: -claim, +ConfigMap:\n%s", diff)
			}
		})
	}
}

// viaInstanceState is req with the instance claim Crossplane handed in
// replaced by the ConfigMap the instance publishes from it; false when req
// carries no instance claim.
func viaInstanceState(t testing.TB, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionRequest, bool) {
	t.Helper()
	items := req.GetRequiredResources()[engine.RequirementInstance].GetItems()
	if len(items) == 0 {
		return nil, false
	}
	u := items[0].GetResource().AsMap()
	var claim struct {
		Metadata metav1.ObjectMeta               `json:"metadata"`
		Spec     v1alpha1.FireboltInstanceSpec   `json:"spec"`
		Status   v1alpha1.FireboltInstanceStatus `json:"status"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &claim); err != nil {
		t.Fatal(err)
	}
	st := instancestate.Of(claim.Metadata.Name, claim.Spec, claim.Status, composite.ConditionOf(u, engine.TypeInstanceAuthReady))
	cm, err := instancestate.ConfigMap(claim.Metadata.Namespace, claim.Metadata.Name, st)
	if err != nil {
		t.Fatal(err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	out := proto.Clone(req).(*fnv1.RunFunctionRequest)
	delete(out.GetRequiredResources(), engine.RequirementInstance)
	out.RequiredResources[engine.RequirementInstanceState] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: s}}}
	return out, true
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
