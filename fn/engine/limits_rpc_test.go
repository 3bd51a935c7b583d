package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// What a rendering must fit in.
const (
	// grpcLimit is Crossplane's limit on a function's response (gRPC's
	// default receive size, which Crossplane does not raise) and the
	// function's default limit on a request.
	grpcLimit = 4 << 20
	// etcdLimit is etcd's default request size limit: the composite, its
	// status included, is written in one request (and so is the claim,
	// which Crossplane gives the composite's status).
	etcdLimit = 3 << 19
	// recordingLimit is the schema's maxLength of
	// status.renderings[].objects.
	recordingLimit = 262144
)

// A rollout with the longest names: engine, namespace and instance at their
// limits, generation numbers of three digits.
var (
	longEngine    = strings.Repeat("e", v1alpha1.MaxEngineNameLength)
	longNamespace = strings.Repeat("n", validation.DNS1123LabelMaxLength)
	longInstance  = strings.Repeat("i", v1alpha1.MaxInstanceNameLength)
)

// sizeRollout is a minimal Crossplane for size measurements: it calls the
// function, writes the desired status back, applies the desired objects
// and makes every StatefulSet ready at once.
type sizeRollout struct {
	t        testing.TB
	f        *fn.Function
	xr       map[string]any
	observed map[string]map[string]any
	req      *fnv1.RunFunctionRequest
	rsp      *fnv1.RunFunctionResponse
}

func newSizeRollout(t testing.TB, name string, replicas int64, status map[string]any) *sizeRollout {
	t.Helper()
	c := engine.New(nil, nil, engine.WithClock(func() time.Time { return responseClock }))
	return &sizeRollout{
		t: t,
		f: fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c}),
		xr: map[string]any{
			"apiVersion": "compute.firebolt.io/v1alpha1",
			"kind":       "XFireboltEngine",
			"metadata": map[string]any{
				"name": name + "-x7k2p", "uid": "5f0c2a3e-7d41-4c55-9b1e-2f6a8d3c9e01", "generation": int64(1),
				"labels": map[string]any{"crossplane.io/claim-name": name, "crossplane.io/claim-namespace": longNamespace},
			},
			"spec":   map[string]any{"instanceRef": longInstance, "replicas": replicas},
			"status": status,
		},
		observed: map[string]map[string]any{},
	}
}

func (r *sizeRollout) request() *fnv1.RunFunctionRequest {
	r.t.Helper()
	instance := map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltInstance",
		"metadata": map[string]any{"name": longInstance, "namespace": longNamespace},
		"spec":     map[string]any{"id": "01JBCDEFGHJKMNPQRSTVWXYZ00", "metadata": map[string]any{}, "gateway": map[string]any{}},
		"status": map[string]any{
			"metadataReady": true, "gatewayReady": true, "phase": "Ready",
			"metadataEndpoint": longInstance + "-metadata." + longNamespace + ".svc.cluster.local:7000",
		},
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "limits"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(r.xr)}, Resources: map[string]*fnv1.Resource{}},
		RequiredResources: map[string]*fnv1.Resources{
			engine.RequirementInstance: {Items: []*fnv1.Resource{{Resource: mustStruct(instance)}}},
		},
	}
	for name, o := range r.observed {
		req.Observed.Resources[name] = &fnv1.Resource{Resource: mustStruct(o)}
	}
	// As a running instance hands it in: through the ConfigMap it
	// publishes for its engines.
	req, _ = viaInstanceState(r.t, req)
	return req
}

// step runs one call and writes what it asks for.
func (r *sizeRollout) step() {
	r.t.Helper()
	r.req = r.request()
	rsp, err := r.f.RunFunction(context.Background(), r.req)
	if err != nil {
		r.t.Fatal(err)
	}
	r.rsp = rsp
	r.xr["status"] = rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
	next := map[string]map[string]any{}
	for name, d := range rsp.GetDesired().GetResources() {
		o := d.GetResource().AsMap()
		u := &unstructured.Unstructured{Object: o}
		u.SetGeneration(1)
		if u.GetKind() == "StatefulSet" {
			n, _, _ := unstructured.NestedFloat64(o, "spec", "replicas")
			o["status"] = map[string]any{"observedGeneration": float64(1), "replicas": n, "readyReplicas": n, "availableReplicas": n}
		}
		next[name] = o
	}
	r.observed = next
}

func (r *sizeRollout) phase() string {
	p, _, _ := unstructured.NestedString(r.xr, "status", "phase")
	return p
}

// until steps until the engine is in phase.
func (r *sizeRollout) until(phase string) {
	r.t.Helper()
	for i := 0; r.phase() != phase; i++ {
		if i > 20 {
			r.t.Fatalf("never reached %s, at %s; conditions %v", phase, r.phase(), r.rsp.GetConditions())
		}
		r.step()
	}
}

// sizes are what a sizeRollout at its largest weighs against each limit.
type sizes struct {
	Request, Response int
	ConfigMap         int
	Recording         int
	Composite         int
}

// draining renders the largest state an engine of this many replicas goes
// through: draining, two generations' objects returned and both their
// renderings recorded, generation numbers of three digits.
func draining(t testing.TB, replicas int64) sizes {
	t.Helper()
	r := newSizeRollout(t, longEngine, replicas, map[string]any{"phase": "creating", "currentGeneration": int64(998), "activeGeneration": int64(-1)})
	r.until("stable")
	spec := r.xr["spec"].(map[string]any) //nolint:forcetypeassert // Set above.
	spec["customEngineConfig"] = map[string]any{"logging": map[string]any{"format": "text"}}
	r.until("draining")
	r.step()

	var s sizes
	s.Request, s.Response = proto.Size(r.req), proto.Size(r.rsp)
	for _, d := range r.rsp.GetDesired().GetResources() {
		cm := d.GetResource().AsMap()
		if cm["kind"] != "ConfigMap" {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(cm, "data")
		n := 0
		for k, v := range data {
			n += len(k) + len(v)
		}
		s.ConfigMap = max(s.ConfigMap, n)
	}
	renderings, _, _ := unstructured.NestedSlice(r.xr, "status", "renderings")
	if len(renderings) != 2 {
		t.Fatalf("want the renderings of two generations, got %d", len(renderings))
	}
	for _, rr := range renderings {
		o, _, _ := unstructured.NestedString(rr.(map[string]any), "objects") //nolint:forcetypeassert // Status written by the function.
		s.Recording = max(s.Recording, len(o))
	}
	b, err := json.Marshal(r.xr)
	if err != nil {
		t.Fatal(err)
	}
	s.Composite = len(b)
	return s
}

// TestReplicaLimitFits renders a sizeRollout at v1alpha1.MaxEngineReplicas with
// the longest names and wants every size at most a quarter of its limit,
// so the limit keeps working when the rendering grows.
func TestReplicaLimitFits(t *testing.T) {
	got := draining(t, v1alpha1.MaxEngineReplicas)
	t.Logf("at %d replicas: %+v", v1alpha1.MaxEngineReplicas, got)
	for _, c := range []struct {
		what        string
		size, limit int
	}{
		{"request (the function's --max-recv-message-size default)", got.Request, grpcLimit},
		{"response (Crossplane's gRPC limit)", got.Response, grpcLimit},
		{"ConfigMap data (the API server's limit)", got.ConfigMap, corev1.MaxSecretSize},
		{"recording (the schema's maxLength of status.renderings[].objects)", got.Recording, recordingLimit},
		{"composite (etcd's request limit)", got.Composite, etcdLimit},
	} {
		if c.size > c.limit/4 {
			t.Errorf("%s: %d bytes at %d replicas, more than a quarter of the limit %d", c.what, c.size, v1alpha1.MaxEngineReplicas, c.limit)
		}
	}
}

// BenchmarkRolloutSize reports, per replica count, the sizes a draining
// sizeRollout with the longest names reaches; the limit table of
// docs/scale-and-performance.md comes from it:
//
//	go test ./fn/engine -run '^$' -bench BenchmarkRolloutSize -benchtime 1x
func BenchmarkRolloutSize(b *testing.B) {
	defer engine.LiftReplicaLimit()()
	for _, n := range []int64{100, 1000, 2000, 4000, 5000, 6000, 8000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var s sizes
			for b.Loop() {
				s = draining(b, n)
			}
			b.ReportMetric(float64(s.Request), "request-bytes")
			b.ReportMetric(float64(s.Response), "response-bytes")
			b.ReportMetric(float64(s.ConfigMap), "configmap-bytes")
			b.ReportMetric(float64(s.Recording), "recording-bytes")
			b.ReportMetric(float64(s.Composite), "composite-bytes")
		})
	}
}

// TestLimitsAreRefused sends composites that did not come through the
// claim's admission: the function refuses them with a condition naming the
// field, before rendering anything, so nothing is allocated per replica.
func TestLimitsAreRefused(t *testing.T) {
	tooLong := longEngine + "e"
	for name, tc := range map[string]struct {
		engine   string
		replicas int64
		want     string
	}{
		"ReplicasOneAboveTheLimit": {
			engine: "demo", replicas: v1alpha1.MaxEngineReplicas + 1,
			want: "spec.replicas: Invalid value: 1001: must be less than or equal to 1000",
		},
		"ReplicasMaxInt32": {
			engine: "demo", replicas: 2147483647,
			want: "spec.replicas: Invalid value: 2147483647: must be less than or equal to 1000",
		},
		"NameOneAboveTheLimit": {
			engine: tooLong, replicas: 1,
			want: `metadata.name: Invalid value: "` + tooLong + `": a FireboltEngine name may be at most 47 characters`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newSizeRollout(t, tc.engine, tc.replicas, map[string]any{"phase": "creating", "currentGeneration": int64(0), "activeGeneration": int64(-1)})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r.step()
			runtime.ReadMemStats(&after)

			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
				t.Errorf("the call allocated %d bytes", alloc)
			}
			if n := proto.Size(r.rsp); n > 16<<10 {
				t.Errorf("response of %d bytes", n)
			}
			if n := len(r.rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("want no desired resources, got %d", n)
			}
			if rr, _, _ := unstructured.NestedSlice(r.xr, "status", "renderings"); len(rr) != 0 {
				t.Errorf("want no recorded rendering, got %d", len(rr))
			}
			var got *fnv1.Condition
			for _, c := range r.rsp.GetConditions() {
				if c.GetType() == engine.TypeEngineReady {
					got = c
				}
			}
			if got.GetReason() != engine.ReasonLimitExceeded || !strings.HasPrefix(got.GetMessage(), tc.want) {
				t.Errorf("EngineReady: want reason %s and a message starting %q, got %s: %q", engine.ReasonLimitExceeded, tc.want, got.GetReason(), got.GetMessage())
			}
		})
	}
}
