package engine_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/class"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instancestate"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// The simulated engine, its claim and its instance.
const (
	simXRName    = "demo-x7k2p"
	simXRUID     = "5f0c2a3e-7d41-4c55-9b1e-2f6a8d3c9e01"
	simEngine    = "demo"
	simNamespace = "firebolt"
	simInstance  = "inst"
	simClass     = "big"
)

var simEpoch = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// failer is what the simulator reports violations to: *testing.T or
// *rapid.T.
type failer interface {
	Helper()
	Fatalf(format string, args ...any)
}

// draws are the simulator's choices: random under rapid, fixed for
// fixtures.
type draws interface {
	intn(lo, hi int, label string) int
}

// scripted draws take the low end (no crashes, no shuffles) except for
// pod delays, which are podDelay steps.
type scripted struct{ podDelay *int }

func (s scripted) intn(lo, hi int, label string) int {
	if label == "pod delay" {
		return min(max(*s.podDelay, lo), hi)
	}
	return lo
}

// sim is Crossplane and a cluster, reduced to what the engine composer
// relies on: it observes the composite and its composed resources, resolves
// requirements until they settle, deletes observed resources missing from
// the desired state, applies the desired ones keeping the name each
// resource-name first had, replaces the composite status with the desired
// one (resources first, status last; a crash may cut the writes anywhere),
// and makes StatefulSet pods ready after a delay. It checks the seed's
// invariants after every step.
type sim struct {
	t failer
	d draws
	f *fn.Function

	// engine, xrName and xrUID name the claim and its composite.
	engine, xrName, xrUID string

	step int
	xr   *unstructured.Unstructured
	objs map[resource.Name]*simObj

	// claim is the FireboltEngine claim: SetSpec edits it and syncs its
	// spec into the composite, as Crossplane's claim syncer does.
	claim    *unstructured.Unstructured
	instance *unstructured.Unstructured
	classes  map[string]*unstructured.Unstructured
	// classSpecs are the ConfigMaps the classes publish their specs in.
	classSpecs map[string]*unstructured.Unstructured
	// secrets are the Secrets in the namespace, by name.
	secrets map[string]*unstructured.Unstructured
	reqs    map[string]*fnv1.ResourceSelector

	// verdict is what the drain check answers; warning the events.
	verdict scrape.Verdict
	// activity is what an auto-stop sample observes; samples counts them.
	activity scrape.Observation
	samples  int
	warning  []corev1.Event

	// Crash allows cutting a step's writes short.
	Crash bool
	// readyDelay bounds how many steps after creation pods become ready.
	readyDelay int

	everDeleted map[resource.Name]bool
	stsCreated  map[int]bool
	switchedTo  []int
	// observedReady is which generations' pods the function saw ready
	// this step.
	observedReady map[int]bool

	// activeBefore is the active generation the status held before this
	// step; -1 before the first switch.
	activeBefore int
	// drainVerdict is the drain check's answer this step; nil when none ran.
	drainVerdict *scrape.Verdict

	history []string

	// podDrained is the last step a drain probe of an in-place step found
	// each pod of the serving generation drained; podsLetGo counts the
	// pods in-place steps let go.
	podDrained map[string]int
	podsLetGo  int
	// ungatedAt is the last step whose policy had no drain gate, and
	// suspendedAt the last with standardRollingUpdate; -1 for none.
	ungatedAt, suspendedAt int

	lastReq    *fnv1.RunFunctionRequest
	lastRsp    *fnv1.RunFunctionResponse
	conditions map[string]*fnv1.Condition

	// configMaps are ConfigMaps served besides the classes' (the
	// instance's, when a test publishes it), certRequests cert-manager's
	// CertificateRequests, by name; decorate, when set, dresses an
	// observed object further (cert-manager's status of a Certificate).
	// All unset unless a test sets them (tls_sim_test.go).
	configMaps   map[string]*unstructured.Unstructured
	certRequests map[string]*unstructured.Unstructured
	decorate     func(name resource.Name, obj map[string]any)
	// cleanAt is the last step whose writes all went through.
	cleanAt int
}

type simObj struct {
	content map[string]any
	first   string
	uid     string
	readyAt int
	// sts is the StatefulSet controller's state of a StatefulSet.
	sts *simSTS
}

func newSim(t failer, d draws, spec map[string]any) *sim {
	return newSimNamed(t, d, spec, simEngine, simXRName, simXRUID)
}

// newSimNamed is newSim for an engine of another name.
func newSimNamed(t failer, d draws, spec map[string]any, engineName, xrName, xrUID string) *sim {
	s := &sim{
		t: t, d: d,
		engine: engineName, xrName: xrName, xrUID: xrUID,
		objs:        map[resource.Name]*simObj{},
		classes:     map[string]*unstructured.Unstructured{},
		classSpecs:  map[string]*unstructured.Unstructured{},
		secrets:     map[string]*unstructured.Unstructured{},
		reqs:        map[string]*fnv1.ResourceSelector{},
		everDeleted: map[resource.Name]bool{},
		podDrained:  map[string]int{},
		ungatedAt:   -1,
		suspendedAt: -1,
		stsCreated:  map[int]bool{},
		conditions:  map[string]*fnv1.Condition{},
		verdict:     scrape.Verdict{Drained: true},
		readyDelay:  2,
	}
	s.xr = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1",
		"kind":       "XFireboltEngine",
		"metadata": map[string]any{
			"name": s.xrName, "uid": s.xrUID, "generation": int64(1),
			"labels": map[string]any{"crossplane.io/claim-name": s.engine, "crossplane.io/claim-namespace": simNamespace},
		},
	}}
	s.claim = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngine",
		"metadata": map[string]any{"name": s.engine, "namespace": simNamespace, "generation": int64(0)},
	}}
	s.SetSpec(spec)
	s.xr.SetGeneration(1)
	s.SetInstance(true)
	s.SetClass(simClass, "a")
	c := engine.New(simProber{s}, simEvents{s}, engine.WithClock(s.now))
	s.f = fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})
	return s
}

// fail reports a violation with the history that led to it.
func (s *sim) fail(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s\nhistory:\n%s", fmt.Sprintf(format, args...), strings.Join(s.history, "\n"))
}

func statusLine(st v1alpha1.FireboltEngineStatus) string {
	d := "-"
	if st.DrainingGeneration != nil {
		d = strconv.Itoa(*st.DrainingGeneration)
	}
	return fmt.Sprintf("%s cur=%d act=%d dr=%s", st.Phase, st.CurrentGeneration, st.ActiveGeneration, d)
}

func (s *sim) now() time.Time { return simEpoch.Add(time.Duration(s.step) * 10 * time.Second) }

// SetSpec changes the claim's spec, as a user edit reaching the composite;
// Crossplane's own spec fields stay. The claim's generation moves only with
// its spec, the composite's also with Crossplane's writes.
func (s *sim) SetSpec(spec map[string]any) {
	spec = runtime.DeepCopyJSON(spec)
	if s.specJSON(s.claim.Object["spec"]) != s.specJSON(spec) {
		s.claim.Object["spec"] = runtime.DeepCopyJSON(spec)
		s.claim.SetGeneration(s.claim.GetGeneration() + 1)
	}
	spec["claimRef"] = map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngine", "name": s.engine, "namespace": simNamespace,
	}
	if s.specJSON(s.xr.Object["spec"]) == s.specJSON(spec) {
		return
	}
	s.xr.Object["spec"] = spec
	s.xr.SetGeneration(s.xr.GetGeneration() + 1)
}

func (s *sim) specJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		s.fail("step %d: cannot encode a spec: %v", s.step, err)
	}
	return string(b)
}

// SetInstance makes the instance ready or not.
func (s *sim) SetInstance(ready bool) {
	st := map[string]any{"metadataReady": false, "gatewayReady": true}
	if ready {
		st = map[string]any{"metadataReady": true, "metadataEndpoint": simInstance + "-metadata." + simNamespace + ".svc.cluster.local:7000", "gatewayReady": true, "phase": "Ready"}
	}
	s.instance = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltInstance",
		"metadata": map[string]any{"name": simInstance, "namespace": simNamespace},
		"spec":     map[string]any{"id": "01JBCDEFGHJKMNPQRSTVWXYZ00", "metadata": map[string]any{}, "gateway": map[string]any{}},
		"status":   st,
	}}
}

// The simulated instance's authentication: its admin password's Secret
// and the password in it, which no response may ever carry.
const (
	simAdminSecret   = "inst-admin"
	simAdminPassword = "sim-admin-password-never-leaks-7c1e"
)

// SetInstanceAuth makes the instance enable authentication, ready, with
// one issued signing key, and creates the admin password's Secret at
// resourceVersion version, as the instance composer and cert-manager
// would leave them.
func (s *sim) SetInstanceAuth(version string) {
	spec := s.instance.Object["spec"].(map[string]any)
	spec["auth"] = map[string]any{
		"enabled": true,
		"local": map[string]any{
			"admin":            map[string]any{"name": "firebolt", "password": map[string]any{"name": simAdminSecret, "key": "password"}},
			"passwordLogin":    "admin_only",
			"signingAlgorithm": "ES384",
			"tokenExpiry":      "1h",
			"signingKeys": map[string]any{
				"certManager":      map[string]any{"issuerRef": map[string]any{"name": "signing-ca", "kind": "ClusterIssuer"}, "algorithm": "ECDSA", "size": float64(384)},
				"rotationInterval": "720h0m0s",
				"retainDuration":   "48h0m0s",
			},
		},
	}
	st := s.instance.Object["status"].(map[string]any)
	st["auth"] = map[string]any{
		"signingKeyGeneration": float64(1),
		"signingKeys": []any{map[string]any{
			"id": "signing-1", "secretName": simInstance + "-auth-signing", "phase": "Active", "algorithm": "ECDSA", "size": float64(384),
			"createdAt":                    simEpoch.Format(time.RFC3339),
			"observedPublicKeyFingerprint": strings.Repeat("ab", 32),
		}},
	}
	st["conditions"] = []any{map[string]any{
		"type": "AuthReady", "status": "True", "reason": "Ready", "message": "signing keys: signing-1 Active",
		"lastTransitionTime": simEpoch.Format(time.RFC3339),
	}}
	s.secrets[simAdminSecret] = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": simAdminSecret, "namespace": simNamespace, "resourceVersion": version},
		"data":     map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(simAdminPassword))},
	}}
}

// SetClass creates or edits a class; zone goes into its template so an
// edit changes the class hash. An empty zone deletes the class.
func (s *sim) SetClass(name, zone string) {
	if zone == "" {
		delete(s.classes, name)
		delete(s.classSpecs, contract.ClassSpecConfigMap(name))
		return
	}
	spec := map[string]any{"template": map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"tier": "gold"}},
		"spec":     map[string]any{"nodeSelector": map[string]any{"zone": zone}},
	}}
	s.classes[name] = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngineClass",
		"metadata": map[string]any{"name": name, "namespace": simNamespace},
		"spec":     spec,
	}}
	// The class composer publishes the spec as it does for real.
	cm := class.SpecConfigMap(simNamespace, name, class.PublishSpec(runtime.DeepCopyJSON(spec)))
	s.classSpecs[contract.ClassSpecConfigMap(name)] = &unstructured.Unstructured{Object: cm}
}

// UnpublishClass removes the ConfigMap a class publishes its spec in,
// leaving the class claim: a class Crossplane has not composed yet.
func (s *sim) UnpublishClass(name string) {
	delete(s.classSpecs, contract.ClassSpecConfigMap(name))
}

// Status decodes the composite's status.
func (s *sim) Status() v1alpha1.FireboltEngineStatus {
	var st v1alpha1.FireboltEngineStatus
	b, err := json.Marshal(s.xr.Object["status"])
	if err != nil {
		s.fail("step %d: cannot encode composite status: %v", s.step, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		s.fail("step %d: cannot decode composite status: %v", s.step, err)
	}
	return st
}

// Spec decodes the composite's spec.
func (s *sim) Spec() v1alpha1.FireboltEngineSpec {
	var sp v1alpha1.FireboltEngineSpec
	b, err := json.Marshal(s.xr.Object["spec"])
	if err != nil {
		s.fail("step %d: cannot encode composite spec: %v", s.step, err)
	}
	if err := json.Unmarshal(b, &sp); err != nil {
		s.fail("step %d: cannot decode composite spec: %v", s.step, err)
	}
	return sp
}

// snapshotReady records which generations' pods are ready in what the
// function observes this step.
func (s *sim) snapshotReady() {
	s.observedReady = map[int]bool{}
	for name, o := range s.objs {
		if g, ok := generationOf(name); ok && o.content["kind"] == "StatefulSet" {
			replicas, _, _ := unstructured.NestedFloat64(o.content, "spec", "replicas")
			// Zero pods are all ready at once.
			s.observedReady[g] = replicas == 0 || o.sts.ready(s.step) == len(o.sts.pods)
		}
	}
}

// observed dresses a composed object as the API server and Crossplane
// return it.
func (s *sim) observed(name resource.Name, o *simObj) map[string]any {
	u := &unstructured.Unstructured{Object: s.crossplaneMetadata(name, o.content)}
	u.SetUID(types.UID(o.uid))
	u.SetGeneration(1)
	u.SetResourceVersion(strconv.Itoa(s.step + 1))
	u.Object["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "XFireboltEngine", "name": s.xrName, "uid": s.xrUID,
		"controller": true, "blockOwnerDeletion": true,
	}}
	if u.GetKind() == "StatefulSet" {
		replicas, _, _ := unstructured.NestedFloat64(u.Object, "spec", "replicas")
		// Server-side defaults, which must never count as drift.
		_ = unstructured.SetNestedField(u.Object, float64(10), "spec", "revisionHistoryLimit")
		_ = unstructured.SetNestedField(u.Object, "ClusterFirst", "spec", "template", "spec", "dnsPolicy")
		created, ready := replicas, float64(o.sts.ready(s.step))
		if s.step < o.readyAt-1 {
			created = 0 // pods not even created yet: a stuck StatefulSet
		}
		u.SetGeneration(o.sts.generation)
		u.Object["status"] = map[string]any{"observedGeneration": float64(o.sts.observed), "replicas": created, "readyReplicas": ready, "availableReplicas": ready,
			"updatedReplicas": float64(o.sts.updated()), "currentRevision": o.sts.current, "updateRevision": o.sts.reported}
	}
	if u.GetKind() == "Service" {
		_ = unstructured.SetNestedField(u.Object, "SingleStack", "spec", "ipFamilyPolicy")
	}
	if s.decorate != nil {
		s.decorate(name, u.Object)
	}
	return u.Object
}

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
}

// Request builds the request Crossplane would send this step.
func (s *sim) Request() *fnv1.RunFunctionRequest {
	req := &fnv1.RunFunctionRequest{
		Meta: &fnv1.RequestMeta{Tag: "sim"},
		Observed: &fnv1.State{
			Composite: &fnv1.Resource{Resource: mustStruct(runtime.DeepCopyJSON(s.xr.Object))},
			Resources: map[string]*fnv1.Resource{},
		},
	}
	for name, o := range s.objs {
		req.Observed.Resources[string(name)] = &fnv1.Resource{Resource: mustStruct(s.observed(name, o))}
	}
	s.resolve(req)
	return req
}

// resolve fills the required resources Crossplane fetched for s.reqs.
func (s *sim) resolve(req *fnv1.RunFunctionRequest) {
	if len(s.reqs) == 0 {
		req.RequiredResources = nil
		return
	}
	req.RequiredResources = map[string]*fnv1.Resources{}
	for name, sel := range s.reqs {
		var items []*fnv1.Resource
		var found *unstructured.Unstructured
		switch sel.GetKind() {
		case "FireboltEngine":
			found = s.claim
		case "FireboltInstance":
			found = s.instance
		case "FireboltEngineClass":
			found = s.classes[sel.GetMatchName()]
		case "ConfigMap":
			found = s.classSpecs[sel.GetMatchName()]
			if found == nil {
				found = s.configMaps[sel.GetMatchName()]
			}
		case "CertificateRequest":
			found = s.certRequests[sel.GetMatchName()]
		case "Pod":
			found = s.podObject(sel.GetMatchName())
		case "Secret":
			found = s.secrets[sel.GetMatchName()]
		}
		if found != nil && found.GetName() == sel.GetMatchName() && found.GetNamespace() == sel.GetNamespace() {
			items = append(items, &fnv1.Resource{Resource: mustStruct(runtime.DeepCopyJSON(found.Object))})
		}
		req.RequiredResources[name] = &fnv1.Resources{Items: items}
	}
}

// Step runs one reconcile: the function (with requirement iterations),
// then the writes, then the invariants.
func (s *sim) Step() {
	s.t.Helper()
	s.step++
	pre := s.Status()
	// The StatefulSet controller acts between two reconciles, or, now and
	// then, not yet: its status then describes the spec before.
	for _, o := range s.objs {
		if o.sts != nil && s.d.intn(0, 2, "controller pass") < 2 {
			o.sts.advance(s.step, func() int { return s.d.intn(0, s.readyDelay, "pod delay") })
		}
	}
	s.snapshotReady()
	s.noteGate()
	s.drainVerdict = nil
	s.activeBefore = pre.ActiveGeneration
	if pre.Phase == "" {
		s.activeBefore = -1
	}
	req := s.Request()
	var rsp *fnv1.RunFunctionResponse
	for i := 0; ; i++ {
		var err error
		rsp, err = s.f.RunFunction(context.Background(), req)
		if err != nil {
			s.fail("step %d: RunFunction: %v", s.step, err)
		}
		for _, r := range rsp.GetResults() {
			if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
				s.fail("step %d: fatal result: %s", s.step, r.GetMessage())
			}
		}
		next := rsp.GetRequirements().GetResources()
		if equalSelectors(next, s.reqs) || i == 5 {
			break
		}
		s.reqs = next
		s.resolve(req)
	}
	s.lastReq, s.lastRsp = req, rsp
	s.write(pre, rsp)
	s.check(pre)
}

func equalSelectors(a, b map[string]*fnv1.ResourceSelector) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !proto.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

type writeOp struct {
	del    bool
	status bool
	name   resource.Name
	res    *fnv1.Resource
}

// write applies the response in Crossplane's order: deletes of what is
// missing from the desired state, applies in map (here: random) order,
// then the status. A crash keeps only a prefix of these writes.
func (s *sim) write(pre v1alpha1.FireboltEngineStatus, rsp *fnv1.RunFunctionResponse) {
	s.t.Helper()
	desired := rsp.GetDesired().GetResources()
	var ops []writeOp
	var names []string
	for name := range s.objs {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := desired[n]; !ok {
			ops = append(ops, writeOp{del: true, name: resource.Name(n)})
		}
	}
	names = names[:0]
	for n := range desired {
		names = append(names, n)
	}
	sort.Strings(names)
	for i := len(names) - 1; i > 0; i-- {
		j := s.d.intn(0, i, "shuffle")
		names[i], names[j] = names[j], names[i]
	}
	for _, n := range names {
		ops = append(ops, writeOp{name: resource.Name(n), res: desired[n]})
	}
	ops = append(ops, writeOp{status: true})

	// A crash keeps a prefix of the writes. Crossplane also carries on
	// past an apply the API server rejects as invalid and still writes the
	// status, so a step may drop any subset of its applies.
	all := len(ops)
	cut := len(ops)
	if s.Crash {
		switch s.d.intn(0, 5, "crash?") {
		case 0:
			cut = s.d.intn(0, len(ops)-1, "crash after writes")
		case 1:
			kept := ops[:0:0]
			for _, op := range ops {
				if op.del || op.status || s.d.intn(0, 1, "apply fails?") == 0 {
					kept = append(kept, op)
				}
			}
			ops, cut = kept, len(kept)
		}
	}
	if cut == all {
		s.cleanAt = s.step
	}
	var done []string
	for _, op := range ops[:cut] {
		switch {
		case op.del:
			done = append(done, "-"+string(op.name))
		case op.status:
			done = append(done, "status")
		default:
			done = append(done, "+"+string(op.name))
		}
	}
	var ready []string
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "EngineReady" {
			ready = append(ready, c.GetReason())
		}
	}
	s.history = append(s.history, fmt.Sprintf("step %d: %s -> %s %v (%d/%d writes: %s)",
		s.step, statusLine(pre), statusLine(s.desiredStatus(rsp)), ready, cut, len(ops), strings.Join(done, " ")))
	for _, op := range ops[:cut] {
		switch {
		case op.del:
			s.delete(pre, op.name)
		case op.status:
			s.xr.Object["status"] = rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
			for _, c := range rsp.GetConditions() {
				s.conditions[c.GetType()] = c
			}
		default:
			s.apply(op.name, op.res.GetResource().AsMap())
		}
	}
}

func (s *sim) desiredStatus(rsp *fnv1.RunFunctionResponse) v1alpha1.FireboltEngineStatus {
	var st v1alpha1.FireboltEngineStatus
	b, err := json.Marshal(rsp.GetDesired().GetComposite().GetResource().AsMap()["status"])
	if err != nil {
		s.fail("step %d: cannot encode desired status: %v", s.step, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		s.fail("step %d: cannot decode desired status: %v", s.step, err)
	}
	return st
}

func (s *sim) delete(pre v1alpha1.FireboltEngineStatus, name resource.Name) {
	s.t.Helper()
	if g, ok := generationOf(name); ok && name == resource.Name(fmt.Sprintf("g%d-statefulset", g)) {
		if g == pre.ActiveGeneration {
			s.fail("step %d: deleted the active generation %d's StatefulSet", s.step, g)
		}
		if pre.DrainingGeneration != nil && g == *pre.DrainingGeneration && pre.Phase != v1alpha1.EnginePhaseCleaning {
			s.fail("step %d: deleted draining generation %d in phase %s", s.step, g, pre.Phase)
		}
	}
	if name == engine.RoutingServiceKey {
		// Crossplane deletes what the function leaves out: the Service
		// users and the gateway reach the engine by must outlive every
		// phase, gate and lost write while the engine exists.
		s.fail("step %d: deleted the routing Service in phase %s (active %d)", s.step, pre.Phase, pre.ActiveGeneration)
	}
	delete(s.objs, name)
	s.everDeleted[name] = true
}

func (s *sim) apply(name resource.Name, content map[string]any) {
	s.t.Helper()
	canon := s.specJSON(s.crossplaneMetadata(name, content))
	o, exists := s.objs[name]
	if !exists {
		if _, isGen := generationOf(name); isGen && s.everDeleted[name] {
			s.fail("step %d: %s re-created after it was deleted", s.step, name)
		}
		o = &simObj{first: canon, uid: fmt.Sprintf("uid-%s-%d", name, s.step), readyAt: s.step + s.d.intn(0, s.readyDelay, "pod delay")}
		s.objs[name] = o
		// Crossplane records the new reference in the composite's spec:
		// the composite's generation moves, the claim's does not.
		s.xr.SetGeneration(s.xr.GetGeneration() + 1)
		if g, ok := generationOf(name); ok && content["kind"] == "StatefulSet" {
			s.stsCreated[g] = true
			o.sts = newSimSTS(content, o.readyAt)
		}
	} else {
		// Crossplane keeps the name a resource-name first had; the function
		// must never ask for another.
		was := o.content["metadata"].(map[string]any)
		now := content["metadata"].(map[string]any)
		if was["name"] != now["name"] || was["namespace"] != now["namespace"] {
			s.fail("step %d: %s renamed from %v/%v to %v/%v", s.step, name, was["namespace"], was["name"], now["namespace"], now["name"])
		}
		if _, isGen := generationOf(name); isGen && canon != o.first && o.sts == nil {
			s.fail("step %d: %s changed content after it was created:\nfirst: %s\nnow:   %s", s.step, name, o.first, canon)
		}
		if o.sts != nil {
			// A StatefulSet changes in place only as rollout: phased may
			// change it.
			s.applyInPlace(name, o, content)
		}
	}
	if name == engine.RoutingServiceKey {
		to := selectedGeneration(content)
		switch {
		case !exists && s.activeBefore < 0:
			// Created with the first generation, as the original: it has
			// no endpoints until that generation's pods are ready.
		case !exists || selectedGeneration(o.content) != to:
			if from := selectedGeneration(o.content); exists && !s.hasStatefulSet(from) && s.activeBefore < 0 {
				// Nothing served: the generation it selected is gone.
				break
			}
			if !s.observedReady[to] {
				s.fail("step %d: routing switched to generation %d whose pods were not observed ready", s.step, to)
			}
			s.switchedTo = append(s.switchedTo, to)
		}
	}
	o.content = content
}

// crossplaneMetadata is content as Crossplane applies it: with the
// composition-resource-name annotation and the composite's and claim's
// labels it sets on every composed resource (those observed carries), so
// that returning an observed object unchanged (composite.Unchanged) is no
// change.
func (s *sim) crossplaneMetadata(name resource.Name, content map[string]any) map[string]any {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(content)}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["crossplane.io/composition-resource-name"] = string(name)
	u.SetAnnotations(ann)
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l["crossplane.io/composite"] = s.xrName
	l["crossplane.io/claim-name"] = s.engine
	l["crossplane.io/claim-namespace"] = simNamespace
	u.SetLabels(l)
	return u.Object
}

func generationOf(name resource.Name) (int, bool) {
	var g int
	var suffix string
	if _, err := fmt.Sscanf(string(name), "g%d-%s", &g, &suffix); err != nil {
		return 0, false
	}
	return g, true
}

func selectedGeneration(svc map[string]any) int {
	s, _, _ := unstructured.NestedString(svc, "spec", "selector", engine.LabelGeneration)
	g, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return g
}

func (s *sim) hasStatefulSet(gen int) bool {
	_, ok := s.objs[resource.Name(fmt.Sprintf("g%d-statefulset", gen))]
	return ok
}

// generations lists the generations that have objects.
func (s *sim) generations() []int {
	set := map[int]bool{}
	for name := range s.objs {
		if g, ok := generationOf(name); ok {
			set[g] = true
		}
	}
	out := make([]int, 0, len(set))
	for g := range set {
		out = append(out, g)
	}
	sort.Ints(out)
	return out
}

// check asserts the invariants of seed 001 on the state after a step.
func (s *sim) check(pre v1alpha1.FireboltEngineStatus) {
	s.t.Helper()
	st := s.Status()
	switch st.Phase {
	case "":
		// No status written yet (the first step crashed): nothing exists.
		if len(s.objs) > 0 {
			s.fail("step %d: objects exist before any status: %d", s.step, len(s.objs))
		}
		return
	case "creating", "switching", "draining", "cleaning", "stable", "stopped", "updating":
	default:
		s.fail("step %d: invalid phase %q", s.step, st.Phase)
	}
	if pre.Phase == v1alpha1.EnginePhaseDraining && st.Phase == v1alpha1.EnginePhaseCleaning {
		// An old generation is only cleaned once it has drained, or when
		// the policy says not to wait for it.
		spec := s.Spec()
		drained := s.drainVerdict != nil && s.drainVerdict.Drained
		recreate := spec.Rollout == v1alpha1.RolloutRecreate
		unchecked := spec.DrainCheckEnabled != nil && !*spec.DrainCheckEnabled
		if !drained && !recreate && !unchecked {
			s.fail("step %d: draining -> cleaning of generation %d without a drained verdict (verdict %+v), rollout %q, drain check enabled %v",
				s.step, ptrValue(pre.DrainingGeneration), s.drainVerdict, spec.Rollout, spec.DrainCheckEnabled)
		}
	}
	s.checkUpdating(st)
	if st.Phase == "stable" || st.Phase == "stopped" {
		if st.CurrentGeneration != st.ActiveGeneration || st.DrainingGeneration != nil {
			s.fail("step %d: terminal phase %s with current %d, active %d, draining %v", s.step, st.Phase, st.CurrentGeneration, st.ActiveGeneration, st.DrainingGeneration)
		}
	}
	if st.ActiveGeneration >= 0 && s.stsCreated[st.ActiveGeneration] {
		if _, ok := s.objs[resource.Name(fmt.Sprintf("g%d-statefulset", st.ActiveGeneration))]; !ok {
			s.fail("step %d: active generation %d has no StatefulSet", s.step, st.ActiveGeneration)
		}
	}
	// Cleaning deletes the draining generation before the status lets go
	// of it, so only while draining must it exist.
	if d := st.DrainingGeneration; d != nil && s.stsCreated[*d] && st.Phase == v1alpha1.EnginePhaseDraining {
		if _, ok := s.objs[resource.Name(fmt.Sprintf("g%d-statefulset", *d))]; !ok {
			s.fail("step %d: draining generation %d has no StatefulSet", s.step, *d)
		}
	}
	// Before the first switch the Service may select a generation whose
	// StatefulSet is not there yet (or was abandoned): nothing is served.
	if svc, ok := s.objs[engine.RoutingServiceKey]; ok && st.ActiveGeneration >= 0 {
		g := selectedGeneration(svc.content)
		if _, ok := s.objs[resource.Name(fmt.Sprintf("g%d-statefulset", g))]; !ok {
			s.fail("step %d: routing Service selects generation %d, which has no StatefulSet", s.step, g)
		}
	}
	referenced := map[int]bool{st.CurrentGeneration: true}
	if st.ActiveGeneration >= 0 {
		referenced[st.ActiveGeneration] = true
	}
	if st.DrainingGeneration != nil {
		referenced[*st.DrainingGeneration] = true
	}
	if len(referenced) > 2 {
		s.fail("step %d: status references %d generations: %v", s.step, len(referenced), st)
	}
	if gens := s.generations(); len(gens) > 2 {
		s.fail("step %d: %d generations have objects: %v", s.step, len(gens), gens)
	}
	if len(st.Renderings) > 2 {
		s.fail("step %d: %d renderings recorded", s.step, len(st.Renderings))
	}
	// What kstatus and Argo CD read on the claim: never ahead of the claim,
	// and the claim's generation only once its spec is all that runs.
	if g := s.claim.GetGeneration(); st.ObservedGeneration > g {
		s.fail("step %d: observedGeneration %d is ahead of the claim's generation %d", s.step, st.ObservedGeneration, g)
	} else if st.ObservedGeneration == g {
		if st.Phase != "stable" && st.Phase != "stopped" {
			s.fail("step %d: observedGeneration %d published in phase %s", s.step, g, st.Phase)
		}
		if gens := s.generations(); len(gens) != 1 || gens[0] != st.ActiveGeneration {
			s.fail("step %d: observedGeneration %d published with generations %v, active %d", s.step, g, gens, st.ActiveGeneration)
		}
		if ok, why := s.activeRunsSpec(); !ok {
			s.fail("step %d: observedGeneration %d published while the active generation does not run the claim's spec: %s", s.step, g, why)
		}
	}
}

// activeRunsSpec reports whether the active generation's StatefulSet runs
// the composite's spec: its replicas and its image.
func (s *sim) activeRunsSpec() (bool, string) {
	st, spec := s.Status(), s.Spec()
	o := s.objs[resource.Name(fmt.Sprintf("g%d-statefulset", st.ActiveGeneration))]
	if o == nil {
		return false, "active StatefulSet missing"
	}
	replicas, _, _ := unstructured.NestedFloat64(o.content, "spec", "replicas")
	if want := s.effectiveReplicas(); int32(replicas) != want {
		return false, fmt.Sprintf("active StatefulSet has %v replicas, want %d (spec %d)", replicas, want, spec.Replicas)
	}
	wantImage := v1beta1.DefaultEngineImage
	if spec.Template != nil && len(spec.Template.Spec.Containers) > 0 && spec.Template.Spec.Containers[0].Image != "" {
		wantImage = spec.Template.Spec.Containers[0].Image
	}
	cs, _, _ := unstructured.NestedSlice(o.content, "spec", "template", "spec", "containers")
	if len(cs) == 0 || cs[0].(map[string]any)["image"] != wantImage {
		return false, fmt.Sprintf("active StatefulSet does not run %s", wantImage)
	}
	return true, ""
}

// effectiveReplicas is the count the engine should run: auto-stop's
// decision once it has written one, the spec's otherwise.
func (s *sim) effectiveReplicas() int32 {
	if a := s.Status().AutoStop; a != nil && a.Replicas != nil {
		return *a.Replicas
	}
	return s.Spec().Replicas
}

// SetWakeStamp sets the wake annotation on the composite, as Crossplane's
// claim syncer copies it from the claim; "" removes it.
func (s *sim) SetWakeStamp(v string) {
	a := s.xr.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if v == "" {
		delete(a, "firebolt.io/wake-requested")
	} else {
		a["firebolt.io/wake-requested"] = v
	}
	s.xr.SetAnnotations(a)
}

// Converged reports whether the engine rests in the terminal phase of its
// spec, serving a generation rendered from that spec, with nothing else
// left.
func (s *sim) Converged() (bool, string) {
	st := s.Status()
	want := v1alpha1.EnginePhaseStable
	if s.effectiveReplicas() == 0 {
		want = v1alpha1.EnginePhaseStopped
	}
	if st.Phase != want || st.CurrentGeneration != st.ActiveGeneration || st.DrainingGeneration != nil {
		return false, fmt.Sprintf("phase %s (want %s), current %d, active %d, draining %v", st.Phase, want, st.CurrentGeneration, st.ActiveGeneration, st.DrainingGeneration)
	}
	if st.ObservedGeneration != s.claim.GetGeneration() {
		return false, fmt.Sprintf("observedGeneration %d, claim generation %d", st.ObservedGeneration, s.claim.GetGeneration())
	}
	if gens := s.generations(); len(gens) != 1 || gens[0] != st.ActiveGeneration {
		return false, fmt.Sprintf("generations with objects: %v, active %d", gens, st.ActiveGeneration)
	}
	if ok, why := s.activeRunsSpec(); !ok {
		return false, why
	}
	if ok, why := s.allUpdated(); !ok {
		return false, why
	}
	if svc := s.objs[engine.RoutingServiceKey]; svc == nil || selectedGeneration(svc.content) != st.ActiveGeneration {
		return false, "routing Service does not select the active generation"
	}
	return true, ""
}

// simProber answers drain checks with the simulator's verdict and checks
// they only happen for the draining generation.
type simProber struct{ s *sim }

func (p simProber) Drain(_ context.Context, ns string, sel labels.Selector, _ scrape.Options) scrape.Verdict {
	st := p.s.Status()
	g, _ := sel.RequiresExactMatch(engine.LabelGeneration)
	if pod, ok := sel.RequiresExactMatch(appsv1.StatefulSetPodNameLabel); ok {
		// An in-place step's gate: one pod of the serving generation.
		want := fmt.Sprintf("%s-g%d-", p.s.engine, st.ActiveGeneration)
		_, err := strconv.Atoi(strings.TrimPrefix(pod, want))
		if st.Phase != v1alpha1.EnginePhaseUpdating || strconv.Itoa(st.ActiveGeneration) != g || !strings.HasPrefix(pod, want) || err != nil {
			p.s.fail("step %d: drain check of pod %s (generation %s) while %s (active %d)", p.s.step, pod, g, st.Phase, st.ActiveGeneration)
		}
		v := p.s.verdict
		if v.Drained {
			p.s.podDrained[pod] = p.s.step
		}
		return v
	}
	if st.Phase != v1alpha1.EnginePhaseDraining || st.DrainingGeneration == nil || strconv.Itoa(*st.DrainingGeneration) != g || ns != simNamespace {
		p.s.fail("step %d: drain check of generation %s in %s while %s (draining %v)", p.s.step, g, ns, st.Phase, st.DrainingGeneration)
	}
	v := p.s.verdict
	p.s.drainVerdict = &v
	return v
}

// Activity answers auto-stop's samples with the simulator's observation
// and checks they only happen at rest, for the active generation.
func (p simProber) Activity(_ context.Context, ns string, sel labels.Selector, _ scrape.Options) scrape.Observation {
	st := p.s.Status()
	g, _ := sel.RequiresExactMatch(engine.LabelGeneration)
	if (st.Phase != v1alpha1.EnginePhaseStable && st.Phase != v1alpha1.EnginePhaseStopped) || strconv.Itoa(st.ActiveGeneration) != g || ns != simNamespace {
		p.s.fail("step %d: activity sample of generation %s in %s while %s (active %d)", p.s.step, g, ns, st.Phase, st.ActiveGeneration)
	}
	p.s.samples++
	return p.s.activity
}

type simEvents struct{ s *sim }

func (e simEvents) Warnings(context.Context, string, types.UID) ([]corev1.Event, error) {
	return e.s.warning, nil
}

func ptrValue(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// SetInstanceTLS makes the instance enable engine TLS with issuer, its
// anchor issued and the gateway reencrypting (nil: engine TLS off), and report trust and up as what
// every gateway pod is confirmed to trust and how it reaches engines; it
// then publishes the instance's state for engines in its ConfigMap, as the
// instance composer does (package instancestate), so engines read it from
// there.
func (s *sim) SetInstanceTLS(issuer *v1alpha1.CertManagerSpec, trust []string, up *v1alpha1.EngineUpstreamStatus) {
	spec := s.instance.Object["spec"].(map[string]any)
	st := s.instance.Object["status"].(map[string]any)
	delete(spec, "tls")
	delete(st, "engineTLS")
	delete(st, "rolledEngineTrustCAs")
	delete(st, "rolledEngineUpstream")
	if issuer != nil {
		spec["tls"] = s.asJSON(v1alpha1.TLSSpec{Engine: &v1alpha1.TLSListenerSpec{Enabled: true, CertManager: issuer}})
		st["engineTLS"] = map[string]any{"secretName": simInstance + "-engine-tls", "reencrypting": true}
	}
	if len(trust) > 0 {
		st["rolledEngineTrustCAs"] = s.asJSON(trust)
	}
	if up != nil {
		st["rolledEngineUpstream"] = s.asJSON(up)
	}
	var ispec v1alpha1.FireboltInstanceSpec
	var ist v1alpha1.FireboltInstanceStatus
	s.fromJSON(spec, &ispec)
	s.fromJSON(st, &ist)
	cm, err := instancestate.ConfigMap(simNamespace, simInstance, instancestate.Of(simInstance, ispec, ist, nil))
	if err != nil {
		s.fail("step %d: cannot publish the instance's state: %v", s.step, err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		s.fail("step %d: cannot convert the instance's ConfigMap: %v", s.step, err)
	}
	if s.configMaps == nil {
		s.configMaps = map[string]*unstructured.Unstructured{}
	}
	s.configMaps[cm.Name] = &unstructured.Unstructured{Object: obj}
}

// asJSON is v as unstructured JSON.
func (s *sim) asJSON(v any) any {
	var out any
	s.fromJSON(v, &out)
	return out
}

// fromJSON decodes v, any value, into out through JSON.
func (s *sim) fromJSON(v, out any) {
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		s.fail("step %d: cannot convert %T to %T: %v", s.step, v, out, err)
	}
}
