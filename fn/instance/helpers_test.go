package instance_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/fieldpath"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance/envoyconfig"
	"github.com/firebolt-db/firebolt-crossplane/fn/instancestate"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// Facts of the instance most cases compose.
const (
	xrName    = "demo-m4x8t"
	claim     = "demo"
	namespace = "firebolt"
	derivedID = "01KYYC8A80558KKP6M99KQ0AVJ" // DeriveID of xrUID created at 2026-08-01T10:00:00Z
	password  = "7d4e1a9c0b3f526e8a17c4d9"

	metadataEndpoint = "demo-metadata.firebolt.svc.cluster.local:7000"
	gatewayEndpoint  = "demo-gateway.firebolt.svc.cluster.local"
)

// obj is an object as Crossplane exchanges it: plain JSON values.
type obj map[string]any

// parse reads a YAML object; every test object is written as YAML so it
// reads like what Crossplane applies.
func parse(t *testing.T, y string) obj {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("bad test YAML: %v\n%s", err, y)
	}
	o := obj{}
	if err := json.Unmarshal(j, &o); err != nil {
		t.Fatalf("bad test YAML: %v\n%s", err, y)
	}
	return o
}

// with returns a deep copy of o with the given field paths set; a nil value
// deletes the field.
func (o obj) with(t *testing.T, kv ...any) obj {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	c := obj{}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	p := fieldpath.Pave(c)
	for i := 0; i < len(kv); i += 2 {
		path := kv[i].(string)
		if kv[i+1] == nil {
			if err := p.DeleteField(path); err != nil {
				t.Fatalf("cannot delete %s: %v", path, err)
			}
			continue
		}
		v := kv[i+1]
		// Normalise to JSON values, as a Struct holds them.
		vb, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("cannot encode %s: %v", path, err)
		}
		var jv any
		if err := json.Unmarshal(vb, &jv); err != nil {
			t.Fatalf("cannot decode %s: %v", path, err)
		}
		if err := p.SetValue(path, jv); err != nil {
			t.Fatalf("cannot set %s: %v", path, err)
		}
	}
	return c
}

func (o obj) structpb(t *testing.T) *structpb.Struct {
	t.Helper()
	// Through JSON, so nested obj values become plain maps.
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	s := &structpb.Struct{}
	err = s.UnmarshalJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// configHash is the contract of the firebolt.io/config-hash annotation:
// the first 16 hex characters of SHA-256 over the length-prefixed parts.
func configHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(len(p)))
		h.Write(l[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func b64(s string) string {
	return base64.StdEncoding.EncodeToString([]byte(s))
}

// envoyConfig is the gateway configuration the gateway package renders for
// the test namespace; what is in it is that package's business, that the
// ConfigMap carries exactly it is this one's.
func envoyConfig(t *testing.T, metricsPort int32) string {
	t.Helper()
	return envoyConfigWake(t, metricsPort, true)
}

// envoyConfigWake is envoyConfig with or without the wake agent.
func envoyConfigWake(t *testing.T, metricsPort int32, wake bool) string {
	t.Helper()
	b, err := envoyconfig.Config(envoyconfig.Params{Namespace: namespace, MetricsPort: metricsPort, WakeAgent: wake})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Requests.

func xr(t *testing.T, spec, status string) obj {
	t.Helper()
	x := parse(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: XFireboltInstance
metadata:
  name: demo-m4x8t
  uid: 5b7a2a3e-3c1f-4d5e-9a0b-1c2d3e4f5a6b
  creationTimestamp: "2026-08-01T10:00:00Z"
  labels:
    crossplane.io/claim-name: demo
    crossplane.io/claim-namespace: firebolt
`)
	x["spec"] = parse(t, spec)
	if status != "" {
		x["status"] = parse(t, status)
	}
	return x
}

type request struct {
	xr       obj
	observed map[string]obj
	required map[string][]obj // nil entry: resolved, nothing found
}

func (r request) build(t *testing.T) *fnv1.RunFunctionRequest {
	t.Helper()
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: r.xr.structpb(t)}}}
	if len(r.observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for n, o := range r.observed {
			req.Observed.Resources[n] = &fnv1.Resource{Resource: o.structpb(t)}
		}
	}
	if r.required != nil {
		req.RequiredResources = map[string]*fnv1.Resources{}
		for n, items := range r.required {
			rs := &fnv1.Resources{}
			for _, o := range items {
				rs.Items = append(rs.Items, &fnv1.Resource{Resource: o.structpb(t)})
			}
			req.RequiredResources[n] = rs
		}
	}
	return req
}

// Responses.

type want struct {
	status       obj
	ready        bool
	resources    map[string]obj
	readyRes     map[string]bool
	conditions   []*fnv1.Condition
	results      []*fnv1.Result
	ttl          time.Duration
	requirements map[string]*fnv1.ResourceSelector
	// auth is the AuthReady condition; nil means authentication is off, which
	// every case is unless it says otherwise. omitAuth is for the plans that
	// publish no AuthReady at all (an unclaimed composite).
	auth     *fnv1.Condition
	omitAuth bool
}

// build is the whole response. Every response publishes
// status.observedGeneration (0 unless the case says otherwise) and
// lastReconciled, and asks for the instance's own claim.
func (w want) build(t *testing.T) *fnv1.RunFunctionResponse {
	t.Helper()
	if _, ok := w.status["observedGeneration"]; !ok {
		w.status = w.status.with(t, "observedGeneration", 0)
	}
	// No request carries lastReconciled, so every call stamps it with
	// the composer's clock.
	if _, ok := w.status["lastReconciled"]; !ok {
		w.status = w.status.with(t, "lastReconciled", authNow.Format(time.RFC3339))
	}
	reqs := map[string]*fnv1.ResourceSelector{"claim": claimSelector()}
	for n, r := range w.requirements {
		reqs[n] = r
	}
	w.requirements = reqs
	w.conditions = w.withAuth()
	ready := fnv1.Ready_READY_FALSE
	if w.ready {
		ready = fnv1.Ready_READY_TRUE
	}
	rsp := &fnv1.RunFunctionResponse{
		Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(w.ttl)},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{
				Resource: obj{"status": map[string]any(w.status)}.structpb(t),
				Ready:    ready,
			},
			Resources: map[string]*fnv1.Resource{},
		},
		Conditions: w.conditions,
		Results:    w.results,
	}
	for n, o := range w.resources {
		r := fnv1.Ready_READY_FALSE
		if w.readyRes[n] {
			r = fnv1.Ready_READY_TRUE
		}
		rsp.Desired.Resources[n] = &fnv1.Resource{Resource: o.structpb(t), Ready: r}
	}
	if w.requirements != nil {
		rsp.Requirements = &fnv1.Requirements{Resources: w.requirements}
	}
	return rsp
}

// withAuth places AuthReady where the function does: after MetadataReady,
// GatewayReady and GatewayTLSReady, before the conditions that follow
// them. A case that names no GatewayTLSReady has TLS off: Disabled is
// placed after GatewayReady.
func (w want) withAuth() []*fnv1.Condition {
	if w.omitAuth {
		return w.conditions
	}
	conds := w.conditions
	if !slices.ContainsFunc(conds, func(c *fnv1.Condition) bool { return c.GetType() == "GatewayTLSReady" }) {
		at := slices.IndexFunc(conds, func(c *fnv1.Condition) bool { return c.GetType() == "GatewayReady" })
		conds = slices.Insert(slices.Clone(conds), at+1, cond("GatewayTLSReady", true, "Disabled", "TLS on the gateway is disabled: it serves plain HTTP"))
	}
	if !slices.ContainsFunc(conds, func(c *fnv1.Condition) bool { return c.GetType() == "EngineTLSReady" }) {
		if at := slices.IndexFunc(conds, func(c *fnv1.Condition) bool { return c.GetType() == "GatewayTLSReady" }); at >= 0 {
			conds = slices.Insert(slices.Clone(conds), at+1, cond("EngineTLSReady", true, "Disabled", "engine TLS is not configured"))
		}
	}
	a := w.auth
	if a == nil {
		a = cond("AuthReady", true, "Disabled", "authentication is disabled")
	}
	at := 0
	for i, c := range conds {
		if c.GetType() == "MetadataReady" || c.GetType() == "GatewayReady" || c.GetType() == "GatewayTLSReady" || c.GetType() == "EngineTLSReady" {
			at = i + 1
		}
	}
	out := make([]*fnv1.Condition, 0, len(conds)+1)
	out = append(out, conds[:at]...)
	out = append(out, a)
	return append(out, conds[at:]...)
}

func claimSelector() *fnv1.ResourceSelector {
	ns := namespace
	return &fnv1.ResourceSelector{
		ApiVersion: "compute.firebolt.io/v1alpha1", Kind: "FireboltInstance",
		Match: &fnv1.ResourceSelector_MatchName{MatchName: claim}, Namespace: &ns,
	}
}

func cond(typ string, status bool, reason, message string) *fnv1.Condition {
	s := fnv1.Status_STATUS_CONDITION_FALSE
	if status {
		s = fnv1.Status_STATUS_CONDITION_TRUE
	}
	m := message
	return &fnv1.Condition{Type: typ, Status: s, Reason: reason, Message: &m, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}
}

func result(sev fnv1.Severity, reason, message string) *fnv1.Result {
	r := reason
	return &fnv1.Result{Severity: sev, Reason: &r, Message: message, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}
}

func status(phase, id string, metadataReady, gatewayReady bool) obj {
	s := obj{"phase": phase, "id": id, "metadataReady": metadataReady, "gatewayReady": gatewayReady}
	if metadataReady {
		s["metadataEndpoint"] = metadataEndpoint
	}
	if gatewayReady {
		s["gatewayEndpoint"] = gatewayEndpoint
	}
	return s
}

func allReady(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

func merge(ms ...map[string]obj) map[string]obj {
	out := map[string]obj{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func keys(m map[string]obj) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// withoutEngineState is rsp without the ConfigMap engines read the
// instance from, which every case's whole-response diff would otherwise
// repeat. What it publishes is checked here against the response itself:
// the status's id, metadata readiness and endpoint, the keys engines run,
// and AuthReady's status and reason (TestEngineState checks the rest).
func withoutEngineState(t *testing.T, rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionResponse {
	t.Helper()
	cm, ok := rsp.GetDesired().GetResources()[string(instance.RNEngineState)]
	if !ok {
		return rsp
	}
	out := proto.Clone(rsp).(*fnv1.RunFunctionResponse)
	delete(out.GetDesired().GetResources(), string(instance.RNEngineState))

	data := map[string]string{}
	for k, v := range cm.GetResource().GetFields()["data"].GetStructValue().GetFields() {
		data[k] = v.GetStringValue()
	}
	got, problem := instancestate.Decode(data)
	if problem != "" {
		t.Fatalf("the engine-state ConfigMap cannot be read: %s", problem)
	}
	var st v1alpha1.FireboltInstanceStatus
	if err := composite.Decode(rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any), &st); err != nil {
		t.Fatal(err)
	}
	var auth *fnv1.Condition
	for _, c := range rsp.GetConditions() {
		if c.GetType() == instance.TypeAuthReady {
			auth = c
		}
	}
	wantKeys := 0
	if st.Auth != nil {
		wantKeys = len(signing.RenderSet(signing.Sanitize(claim, *st.Auth)))
	}
	switch {
	case got.ID != st.ID || got.MetadataReady != st.MetadataReady || got.MetadataEndpoint != st.MetadataEndpoint:
		t.Errorf("engine-state publishes id %q, metadataReady %t, endpoint %q; the status says %q, %t, %q",
			got.ID, got.MetadataReady, got.MetadataEndpoint, st.ID, st.MetadataReady, st.MetadataEndpoint)
	case len(got.SigningKeys) != wantKeys:
		t.Errorf("engine-state publishes %d signing keys, the status renders %d", len(got.SigningKeys), wantKeys)
	case auth == nil || got.AuthReady == nil || !strings.EqualFold(string(got.AuthReady.Status), strings.TrimPrefix(auth.GetStatus().String(), "STATUS_CONDITION_")) ||
		got.AuthReady.Reason != auth.GetReason():
		t.Errorf("engine-state publishes AuthReady %+v, the response's is %v", got.AuthReady, auth)
	}
	return out
}
