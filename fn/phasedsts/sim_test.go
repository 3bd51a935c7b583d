package phasedsts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased/phasedtest"
	"github.com/firebolt-db/firebolt-crossplane/fn/phasedsts"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

const (
	simNamespace = "apps"
	simName      = "web"
	simToken     = "s3cr3t-t0ken-value"
)

// promServer answers instant queries as Prometheus does, with one series
// while data is true and an empty vector otherwise, and remembers the
// Authorization headers it was sent.
type promServer struct {
	*httptest.Server
	data    atomic.Bool
	queries atomic.Int64
	mu      sync.Mutex
	auth    map[string]int
}

func newPromServer(t *testing.T) *promServer {
	t.Helper()
	p := &promServer{auth: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.queries.Add(1)
		p.mu.Lock()
		p.auth[r.Header.Get("Authorization")]++
		p.mu.Unlock()
		result := `[]`
		if p.data.Load() {
			result = `[{"metric":{"namespace":"apps"},"value":[1700000000,"0"]}]`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":%s}}`, result)
	}))
	t.Cleanup(p.Close)
	return p
}

// simSet plays the StatefulSet controller for the function's StatefulSet:
// a template hash is a revision (phasedtest.Controller does the rest).
type simSet struct {
	phasedtest.Controller
	exists      bool
	replicas    int32
	hash        string
	annotations map[string]any
}

func (s *simSet) apply(desired map[string]any) {
	spec, _ := desired["spec"].(map[string]any)
	md, _ := desired["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	hash, _ := ann[phasedsts.AnnotationTemplateHash].(string)
	ru, _ := spec["updateStrategy"].(map[string]any)["rollingUpdate"].(map[string]any)
	partition := int32(ru["partition"].(float64))
	replicas := int32(spec["replicas"].(float64))
	if !s.exists {
		s.exists, s.replicas = true, replicas
		s.Controller = phasedtest.New(replicas, "web-"+hash[:10])
		s.Generation, s.ObservedGeneration = 0, 0
	}
	if hash != s.hash || partition != s.Partition {
		s.Generation++
	}
	s.hash, s.Partition, s.annotations = hash, partition, ann
	s.UpdateRevision = "web-" + hash[:10]
}

func (s *simSet) object() map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": simName, "namespace": simNamespace, "generation": s.Generation, "annotations": s.annotations},
		"spec": map[string]any{
			"replicas":       s.replicas,
			"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": s.Partition}},
		},
		"status": s.Status(),
	}
}

func (s *simSet) pod(ordinal int32) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": phased.PodName(simName, ordinal), "namespace": simNamespace,
			"labels": map[string]any{phasedsts.LabelRevision: s.Pods[ordinal]}},
	}
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(b, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// simSpec is a PhasedStatefulSet spec of three pods running image,
// checked against url with the token Secret.
func simSpec(image, url string) map[string]any {
	return map[string]any{
		"statefulSet": map[string]any{"spec": map[string]any{
			"replicas":    int64(3),
			"serviceName": simName,
			"selector":    map[string]any{"matchLabels": map[string]any{"app": simName}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": simName}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}},
			},
		}},
		"check": map[string]any{
			"initialDelaySeconds": int64(5), "periodSeconds": int64(2), "successThreshold": int64(2),
			"query": map[string]any{"expr": "up", "url": url, "secretRef": "prom"},
		},
	}
}

// sim drives RunFunction as Crossplane would: the composite's status is
// what the last call desired, the StatefulSet what the last call desired as
// the sim controller moves it, the pod and the Secret what the
// requirements ask for.
type sim struct {
	t      *testing.T
	f      *fn.Function
	now    time.Time
	spec   map[string]any
	status map[string]any
	set    simSet
	// partitions is every partition desired, in order, without repeats.
	partitions []int32
	results    []*fnv1.Result
	responses  []string
	reg        *prometheus.Registry
}

func newSim(t *testing.T, prom *promServer) *sim {
	s := &sim{t: t, now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), reg: prometheus.NewPedanticRegistry()}
	m, err := metrics.New(s.reg, fn.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	s.f = fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
		v1alpha1.XPhasedStatefulSetKind: phasedsts.New(promcheck.New(promcheck.WithLimiter(promcheck.NewLimiter(1))),
			phasedsts.WithClock(func() time.Time { return s.now }), phasedsts.WithMetrics(m)),
	})
	s.spec = simSpec("nginx:1", prom.URL)
	return s
}

func (s *sim) request() *fnv1.RunFunctionRequest {
	xr := map[string]any{
		"apiVersion": "apps.firebolt.io/v1alpha1", "kind": "XPhasedStatefulSet",
		"metadata": map[string]any{"name": "web-x7k2p", "uid": "5d1c7a2e-sim", "labels": map[string]any{
			"crossplane.io/claim-name": simName, "crossplane.io/claim-namespace": simNamespace}},
		"spec": s.spec,
	}
	if s.status != nil {
		xr["status"] = s.status
	}
	claim := map[string]any{"apiVersion": "apps.firebolt.io/v1alpha1", "kind": "PhasedStatefulSet",
		"metadata": map[string]any{"name": simName, "namespace": simNamespace, "generation": int64(1)}, "spec": s.spec}
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "prom", "namespace": simNamespace},
		"data": map[string]any{"token": "czNjcjN0LXQwa2VuLXZhbHVl"}} // base64 of simToken
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "sim"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(s.t, xr)}},
		RequiredResources: map[string]*fnv1.Resources{
			"claim":  {Items: []*fnv1.Resource{{Resource: mustStruct(s.t, claim)}}},
			"secret": {Items: []*fnv1.Resource{{Resource: mustStruct(s.t, secret)}}},
		},
	}
	if s.set.exists {
		req.Observed.Resources = map[string]*fnv1.Resource{phasedsts.ResourceName: {Resource: mustStruct(s.t, s.set.object())}}
		if s.set.Partition < s.set.replicas {
			req.RequiredResources["rolled-pod"] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: mustStruct(s.t, s.set.pod(s.set.Partition))}}}
		}
	}
	return req
}

// call runs the function once and applies what it desired.
func (s *sim) call() *fnv1.RunFunctionResponse {
	s.t.Helper()
	return s.callWith(s.request())
}

// callWith runs the function on req, which may be a snapshot older than
// what the sim holds, and applies what it desired, as Crossplane does.
func (s *sim) callWith(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	s.t.Helper()
	rsp, err := s.f.RunFunction(context.Background(), req)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			s.t.Fatalf("fatal result: %s", r.GetMessage())
		}
	}
	s.results = append(s.results, rsp.GetResults()...)
	b, _ := protojson.Marshal(rsp)
	s.responses = append(s.responses, string(b))
	s.status, _ = rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	d := rsp.GetDesired().GetResources()[phasedsts.ResourceName]
	if d == nil {
		s.t.Fatalf("call at %s desired no StatefulSet: it would be deleted", s.now)
	}
	s.set.apply(d.GetResource().AsMap())
	if n := len(s.partitions); n == 0 || s.partitions[n-1] != s.set.Partition {
		s.partitions = append(s.partitions, s.set.Partition)
	}
	return rsp
}

// run calls the function until done holds or limit calls were made. Time
// moves by the response's TTL, or by a second when the controller changed
// something (a watch event).
func (s *sim) run(limit int, done func() bool) {
	s.t.Helper()
	for range limit {
		rsp := s.call()
		if s.set.Unavailable >= 0 && s.set.Unavailable < int(s.set.Partition) {
			s.t.Fatalf("pod %d below partition %d is being replaced", s.set.Unavailable, s.set.Partition)
		}
		if done() {
			return
		}
		s.advance(rsp)
	}
	s.t.Fatalf("not done after %d calls: partitions %v, pods %v, status %v", limit, s.partitions, s.set.Pods, s.status)
}

// advance moves time to the next call: a second when the controller
// changed something (a watch event), else the response's TTL.
func (s *sim) advance(rsp *fnv1.RunFunctionResponse) {
	if s.set.Tick() {
		s.now = s.now.Add(time.Second)
		return
	}
	s.now = s.now.Add(rsp.GetMeta().GetTtl().AsDuration())
}

func (s *sim) phase() string {
	p, _ := s.status["phase"].(string)
	return p
}

func (s *sim) failedChecks() float64 {
	rp, _ := s.status["rollingPodStatus"].(map[string]any)
	f, _ := rp["consecutiveFailedChecks"].(float64)
	return f
}

// Issue 11, part 3, through RunFunction with a real Prometheus client
// against a stand-in of Prometheus's HTTP API: a new template holds every
// pod while the check returns no data, then rolls one pod per step once it
// returns data, highest ordinal first; the Secret's token reaches
// Prometheus and nothing else.
func TestRunFunctionRollsPodByPod(t *testing.T) {
	prom := newPromServer(t)
	s := newSim(t, prom)

	s.run(20, func() bool {
		return s.phase() == string(v1alpha1.PhasedRolloutUpdated) && s.set.CurrentRevision == s.set.UpdateRevision
	})
	if s.set.Partition != 3 || prom.queries.Load() != 0 {
		t.Fatalf("a new set is held at partition 3 without checks: partition %d, %d queries", s.set.Partition, prom.queries.Load())
	}

	first := s.set.UpdateRevision
	s.spec = simSpec("nginx:2", prom.URL)
	s.run(40, func() bool { return s.failedChecks() >= 4 })
	if s.set.Partition != 3 || s.set.Updated() != 0 || s.phase() != string(v1alpha1.PhasedRolloutRolling) {
		t.Fatalf("checks without data let a pod go: partition %d, %d pods updated, phase %q", s.set.Partition, s.set.Updated(), s.phase())
	}

	prom.data.Store(true)
	s.run(200, func() bool {
		return s.phase() == string(v1alpha1.PhasedRolloutUpdated) && s.set.CurrentRevision == s.set.UpdateRevision
	})
	if s.set.UpdateRevision == first || s.set.Updated() != 3 {
		t.Fatalf("rollout ended without every pod on the new revision: %v", s.set.Pods)
	}
	if want := []int32{3, 2, 1, 0, 3}; fmt.Sprint(s.partitions) != fmt.Sprint(want) {
		t.Errorf("partitions went %v, want %v", s.partitions, want)
	}

	checks := map[string]float64{}
	for _, o := range []string{"data", "no_data", "error"} {
		checks[o] = counterValue(t, s.reg, "function_firebolt_rollout_checks_total", o)
	}
	if total := checks["data"] + checks["no_data"] + checks["error"]; total != float64(prom.queries.Load()) || checks["no_data"] < 4 || checks["data"] < 6 || checks["error"] != 0 {
		t.Errorf("function_firebolt_rollout_checks_total %v, want data >= 6 (two per step), no_data >= 4, no error, summing to the %d queries Prometheus answered", checks, prom.queries.Load())
	}

	prom.mu.Lock()
	auth := prom.auth
	prom.mu.Unlock()
	if len(auth) != 1 || auth["Bearer "+simToken] == 0 {
		t.Errorf("Prometheus saw Authorization headers %v, want only the Secret's bearer token", auth)
	}
	for i, r := range s.responses {
		if strings.Contains(r, simToken) {
			t.Fatalf("response %d carries the Secret's token: %s", i, r)
		}
	}
	reasons := make([]string, 0, len(s.results))
	for _, r := range s.results {
		reasons = append(reasons, r.GetReason())
	}
	for _, want := range []string{"PhasedRolloutStarted", "PhasedRolloutCheckFailed", "PhasedRolloutStepDone", "PhasedRolloutCompleted"} {
		if !strings.Contains(strings.Join(reasons, " "), want) {
			t.Errorf("no %s event among %v", want, reasons)
		}
	}
}

// standardRollingUpdate hands the rollout to the StatefulSet controller:
// partition 0, no check, every pod rolled while the check has no data.
func TestRunFunctionStandardRollingUpdate(t *testing.T) {
	prom := newPromServer(t)
	s := newSim(t, prom)
	s.run(20, func() bool {
		return s.phase() == string(v1alpha1.PhasedRolloutUpdated) && s.set.CurrentRevision == s.set.UpdateRevision
	})

	s.spec = simSpec("nginx:2", prom.URL)
	s.spec["standardRollingUpdate"] = true
	s.run(40, func() bool { return s.set.Updated() == 3 && s.set.CurrentRevision == s.set.UpdateRevision })
	if s.phase() != string(v1alpha1.PhasedRolloutSuspended) || s.set.Partition != 0 || prom.queries.Load() != 0 {
		t.Fatalf("standard rolling update: phase %q, partition %d, %d queries", s.phase(), s.set.Partition, prom.queries.Load())
	}
}

// A new template mid-rollout is applied with every pod held (the partition
// back at the replica count in the same call), so no pod moves to it
// unchecked; the rollout then restarts from the top.
func TestRunFunctionNewTemplateMidRollout(t *testing.T) {
	prom := newPromServer(t)
	prom.data.Store(true)
	s := newSim(t, prom)
	s.run(20, func() bool {
		return s.phase() == string(v1alpha1.PhasedRolloutUpdated) && s.set.CurrentRevision == s.set.UpdateRevision
	})

	s.spec = simSpec("nginx:2", prom.URL)
	s.run(100, func() bool { return s.set.Partition == 2 && s.set.Updated() == 1 && s.set.Unavailable < 0 })

	s.spec = simSpec("nginx:3", prom.URL)
	s.call()
	if s.set.Partition != 3 {
		t.Fatalf("the call applying a new template desired partition %d, want 3: pods 2 and below would roll unchecked", s.set.Partition)
	}
	third := s.set.UpdateRevision
	s.partitions = nil
	s.run(200, func() bool {
		return s.phase() == string(v1alpha1.PhasedRolloutUpdated) && s.set.CurrentRevision == third
	})
	if want := []int32{3, 2, 1, 0, 3}; fmt.Sprint(s.partitions) != fmt.Sprint(want) {
		t.Errorf("restarted rollout's partitions went %v, want %v", s.partitions, want)
	}
	var restarted bool
	for _, r := range s.results {
		restarted = restarted || r.GetReason() == "PhasedRolloutRestarted"
	}
	if !restarted {
		t.Error("no PhasedRolloutRestarted event")
	}
}

// counterValue is the value of the series of counter name whose one label
// has value.
func counterValue(t *testing.T, reg *prometheus.Registry, name, value string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			if mt.GetLabel()[0].GetValue() == value {
				return mt.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series %s{%s}", name, value)
	return 0
}

// A pod template that asks for a host path the function input does not
// allow is refused with TemplateRejected, and the StatefulSet is kept as it
// is: nothing that exists is dropped or changed for it.
func TestRunFunctionRefusesAPrivilegedTemplate(t *testing.T) {
	prom := newPromServer(t)
	s := newSim(t, prom)
	s.run(20, func() bool {
		return s.phase() == string(v1alpha1.PhasedRolloutUpdated) && s.set.CurrentRevision == s.set.UpdateRevision
	})
	hash := s.set.hash

	s.spec = simSpec("nginx:2", prom.URL)
	tpl := s.spec["statefulSet"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	tpl["volumes"] = []any{map[string]any{"name": "host", "hostPath": map[string]any{"path": "/var/lib/docker"}}}
	rsp := s.call()
	if s.set.hash != hash || s.set.Partition != 3 {
		t.Fatalf("a refused template changed the StatefulSet: hash %s (was %s), partition %d", s.set.hash, hash, s.set.Partition)
	}
	var c *fnv1.Condition
	for _, cc := range rsp.GetConditions() {
		if cc.GetType() == phasedsts.TypeUpdated {
			c = cc
		}
	}
	if c.GetReason() != phasedsts.ReasonTemplateRejected || !strings.Contains(c.GetMessage(), "spec.statefulSet.spec.template.spec.volumes[host].hostPath.path") {
		t.Errorf("Updated condition %s %q, want %s naming the host path", c.GetReason(), c.GetMessage(), phasedsts.ReasonTemplateRejected)
	}
}

// rolledOut: the last revision is on every pod and the status says so.
func (s *sim) rolledOut() bool {
	return s.phase() == string(v1alpha1.PhasedRolloutUpdated) && s.set.CurrentRevision == s.set.UpdateRevision
}

// rollEdit rolls a new set out, edits its template and drives the edit's
// rollout with reconcile, one reconcile a round, until it is rolled out:
// then the partitions went 3, 2, 1, 0 and back to 3, with one StepDone
// per pod in the answers Crossplane applied. reconcile returns the applied
// response.
func (s *sim) rollEdit(prom *promServer, reconcile func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse) {
	s.t.Helper()
	prom.data.Store(true)
	s.run(20, s.rolledOut)
	s.spec, s.partitions, s.results = simSpec("nginx:2", prom.URL), nil, nil
	for range 300 {
		rsp := reconcile(s.request())
		if s.rolledOut() {
			break
		}
		s.advance(rsp)
	}
	if !s.rolledOut() {
		s.t.Fatalf("not rolled out: partitions %v, pods %v, status %v", s.partitions, s.set.Pods, s.status)
	}
	if want := []int32{3, 2, 1, 0, 3}; fmt.Sprint(s.partitions) != fmt.Sprint(want) {
		s.t.Errorf("the partitions went %v, want %v", s.partitions, want)
	}
	steps := 0
	for _, r := range s.results {
		if r.GetReason() == phased.ReasonStepDone {
			steps++
		}
	}
	if steps != 3 {
		s.t.Errorf("%d StepDone events in the answers Crossplane applied, want 3 (one per pod)", steps)
	}
}

// Crossplane reads the composite and the StatefulSet from informers that
// may lag: the calls just after a lowering may get the snapshot from before
// it (seen in CI, a composite three seconds old), and Crossplane applies
// what they desire. Replayed twice after every lowering, while the check
// finds no data, that snapshot raises no partition and lets no pod go
// twice.
func TestRunFunctionStaleSnapshotAfterALowering(t *testing.T) {
	prom := newPromServer(t)
	s := newSim(t, prom)
	replays := 0
	s.rollEdit(prom, func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
		before := s.set.Partition
		rsp := s.callWith(req)
		if s.set.Partition < before {
			prom.data.Store(false)
			for range 2 {
				s.now = s.now.Add(time.Second)
				rsp = s.callWith(req)
				replays++
			}
			prom.data.Store(true)
		}
		return rsp
	})
	if replays != 6 {
		t.Errorf("%d stale calls replayed, want 6 (two after each of three lowerings)", replays)
	}
}

// Crossplane calls the function again within a reconcile when the objects
// it fetched afresh differ from those it seeded the first call with, and
// applies only the last answer. Here every reconcile makes two calls on the
// same data, the second with the pipeline context the first returned: the
// second must decide afresh, not stand on the first's move, or the
// StepDone events (in the first answer only) would be lost.
func TestRunFunctionTwoCallsInAReconcile(t *testing.T) {
	prom := newPromServer(t)
	s := newSim(t, prom)
	s.rollEdit(prom, func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
		first, err := s.f.RunFunction(context.Background(), proto.Clone(req).(*fnv1.RunFunctionRequest))
		if err != nil {
			t.Fatal(err)
		}
		req.Context = first.GetContext()
		return s.callWith(req)
	})
}
