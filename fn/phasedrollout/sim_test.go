package phasedrollout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite/compositetest"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased/phasedtest"
	"github.com/firebolt-db/firebolt-crossplane/fn/phasedrollout"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

func TestMain(m *testing.M) { compositetest.Main(m) }

const (
	simNamespace = "sample"
	simTarget    = "web"
	simClaim     = "phasedrollout-sample"
	simXR        = "phasedrollout-sample-x7k2p"
	simToken     = "s3cr3t-t0ken-value"
)

// promServer answers instant queries with one series while data is true
// and an empty vector otherwise.
type promServer struct {
	*httptest.Server
	data    atomic.Bool
	queries atomic.Int64
}

func newPromServer(t *testing.T) *promServer {
	t.Helper()
	p := &promServer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.queries.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+simToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		result := `[]`
		if p.data.Load() {
			result = `[{"metric":{},"value":[1700000000,"1"]}]`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":%s}}`, result)
	}))
	t.Cleanup(p.Close)
	return p
}

// target plays a StatefulSet someone else applies, and its controller: the
// partition is whatever the last applied Object (provider-kubernetes) or
// another writer set.
type target struct {
	phasedtest.Controller
	exists        bool
	strategy      string
	replicas      int32
	annotations   map[string]any
	managedFields []any
}

func newTarget() *target {
	return &target{Controller: phasedtest.New(3, "web-r1"), exists: true, strategy: "RollingUpdate", replicas: 3}
}

// edit is someone else's template change: a new update revision.
func (s *target) edit(rev string) { s.UpdateRevision = rev; s.Generation++ }

func (s *target) setPartition(p int32) {
	if p != s.Partition {
		s.Partition = p
		s.Generation++
	}
}

func (s *target) object() map[string]any {
	md := map[string]any{"name": simTarget, "namespace": simNamespace, "generation": s.Generation, "uid": "uid-web"}
	if s.annotations != nil {
		md["annotations"] = s.annotations
	}
	if s.managedFields != nil {
		md["managedFields"] = s.managedFields
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": md,
		"spec": map[string]any{
			"replicas":       s.replicas,
			"updateStrategy": map[string]any{"type": s.strategy, "rollingUpdate": map[string]any{"partition": s.Partition}},
		},
		"status": s.Status(),
	}
}

// sim drives RunFunction as Crossplane and provider-kubernetes would.
type sim struct {
	t      *testing.T
	f      *fn.Function
	now    time.Time
	spec   map[string]any
	status map[string]any
	sts    *target
	// object is the Object last desired, as provider-kubernetes reports it.
	object  map[string]any
	synced  map[string]any
	others  map[string]map[string]any
	results []*fnv1.Result
	// partitions is every partition the Object set, in order, without
	// repeats.
	partitions []int32
	rsp        *fnv1.RunFunctionResponse
}

func newSim(t *testing.T, promURL string) *sim {
	s := &sim{t: t, now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), sts: newTarget(), others: map[string]map[string]any{}}
	s.f = fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
		v1alpha1.XPhasedRolloutKind: phasedrollout.New(promcheck.New(promcheck.WithLimiter(promcheck.NewLimiter(1))),
			phasedrollout.WithClock(func() time.Time { return s.now })),
	})
	// The seed's sample, with this test's Prometheus.
	s.spec = map[string]any{
		"targetRef": simTarget,
		"check": map[string]any{
			"initialDelaySeconds": int64(30), "periodSeconds": int64(30), "successThreshold": int64(3),
			"query": map[string]any{"expr": "up{}", "url": promURL, "secretRef": "prom-secret"},
		},
	}
	return s
}

func (s *sim) request() *fnv1.RunFunctionRequest {
	xr := map[string]any{
		"apiVersion": "sts.plus/v1alpha1", "kind": "XPhasedRollout",
		"metadata": map[string]any{"name": simXR, "labels": map[string]any{
			"crossplane.io/claim-name": simClaim, "crossplane.io/claim-namespace": simNamespace}},
		"spec": s.spec,
	}
	status := map[string]any{}
	for k, v := range s.status {
		status[k] = v
	}
	// Crossplane keeps the conditions the function returned.
	if s.rsp != nil {
		conds := make([]any, 0, len(s.rsp.GetConditions()))
		for _, c := range s.rsp.GetConditions() {
			st := strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_")
			conds = append(conds, map[string]any{"type": c.GetType(), "status": strings.ToUpper(st[:1]) + strings.ToLower(st[1:]), "reason": c.GetReason(), "message": c.GetMessage()})
		}
		status["conditions"] = conds
	}
	if len(status) > 0 {
		xr["status"] = status
	}
	claim := map[string]any{"apiVersion": "sts.plus/v1alpha1", "kind": "PhasedRollout",
		"metadata": map[string]any{"name": simClaim, "namespace": simNamespace, "generation": int64(1)}, "spec": s.spec}
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "prom-secret", "namespace": simNamespace},
		"data": map[string]any{"token": "czNjcjN0LXQwa2VuLXZhbHVl"}} // base64 of simToken
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "sim"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(s.t, xr)}},
		RequiredResources: map[string]*fnv1.Resources{
			"claim":                 {Items: []*fnv1.Resource{{Resource: mustStruct(s.t, claim)}}},
			phasedrollout.ReqSecret: {Items: []*fnv1.Resource{{Resource: mustStruct(s.t, secret)}}},
			phasedrollout.ReqTarget: {},
		},
	}
	if s.sts.exists {
		req.RequiredResources[phasedrollout.ReqTarget] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: mustStruct(s.t, s.sts.object())}}}
		if p := s.sts.Partition; p < s.sts.replicas {
			pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{
				"name": phased.PodName(simTarget, p), "namespace": simNamespace,
				"labels": map[string]any{"controller-revision-hash": s.sts.Pods[p]}}}
			req.RequiredResources[phasedrollout.ReqRolledPod] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: mustStruct(s.t, pod)}}}
		}
	}
	marked := &fnv1.Resources{}
	for _, o := range s.others {
		marked.Items = append(marked.Items, &fnv1.Resource{Resource: mustStruct(s.t, o)})
	}
	req.RequiredResources[phasedrollout.ReqMarked] = marked
	if s.object != nil {
		obs := deepCopy(s.object)
		if s.synced != nil {
			obs["status"] = map[string]any{"conditions": []any{s.synced}}
		}
		req.Observed.Resources = map[string]*fnv1.Resource{phasedrollout.ResourceName: {Resource: mustStruct(s.t, obs)}}
	}
	return req
}

// call runs the function once; provider-kubernetes then applies the
// desired Object's partition and annotation to the target.
func (s *sim) call() *fnv1.RunFunctionResponse {
	s.t.Helper()
	rsp, err := s.f.RunFunction(context.Background(), s.request())
	if err != nil {
		s.t.Fatal(err)
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			s.t.Fatalf("fatal result: %s", r.GetMessage())
		}
	}
	b, _ := protojson.Marshal(rsp)
	if strings.Contains(string(b), simToken) {
		s.t.Fatalf("the Prometheus token is in the response: %s", b)
	}
	s.rsp = rsp
	s.results = append(s.results, rsp.GetResults()...)
	s.status, _ = rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	d := rsp.GetDesired().GetResources()[phasedrollout.ResourceName]
	if d == nil {
		s.object = nil
		return rsp
	}
	s.object = d.GetResource().AsMap()
	m := manifest(s.object)
	p := int32(m["spec"].(map[string]any)["updateStrategy"].(map[string]any)["rollingUpdate"].(map[string]any)["partition"].(float64))
	if s.sts.exists {
		s.sts.setPartition(p)
		s.sts.annotations = m["metadata"].(map[string]any)["annotations"].(map[string]any)
	}
	if n := len(s.partitions); n == 0 || s.partitions[n-1] != p {
		s.partitions = append(s.partitions, p)
	}
	return rsp
}

// run calls until done holds or limit calls were made. Time moves by the
// TTL, or by a second when the controller changed something.
func (s *sim) run(limit int, done func() bool) {
	s.t.Helper()
	for range limit {
		rsp := s.call()
		if s.sts.Unavailable >= 0 && s.sts.Unavailable < int(s.sts.Partition) {
			s.t.Fatalf("pod %d below partition %d is being replaced", s.sts.Unavailable, s.sts.Partition)
		}
		if done() {
			return
		}
		if s.sts.Tick() {
			s.now = s.now.Add(time.Second)
			continue
		}
		s.now = s.now.Add(rsp.GetMeta().GetTtl().AsDuration())
	}
	s.t.Fatalf("not done after %d calls: partitions %v, pods %v, status %v", limit, s.partitions, s.sts.Pods, s.status)
}

func (s *sim) phase() string {
	p, _ := s.status["phase"].(string)
	return p
}

func (s *sim) condition(typ string) *fnv1.Condition {
	for _, c := range s.rsp.GetConditions() {
		if c.GetType() == typ {
			return c
		}
	}
	return nil
}

func manifest(obj map[string]any) map[string]any {
	return obj["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"].(map[string]any)
}

func deepCopy(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
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
