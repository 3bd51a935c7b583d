package engine_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instancestate"
)

// tlsScripted draws take the low end (no crashes, no shuffles,
// cert-manager issuing at once, pods ready podDelay steps after they are
// created: at once by default), but the gateway replaces every pod it may
// in one step.
type tlsScripted struct{ podDelay int }

func (d tlsScripted) intn(lo, hi int, label string) int {
	switch label {
	case "gateway progress":
		return hi
	case "pod delay":
		return min(max(d.podDelay, lo), hi)
	}
	return lo
}

// gateView is what the engine-TLS gate decides in one response: the
// phase, EngineReady, where the routing Service points and the route it
// publishes, the next Service, the Certificates composed and the events.
type gateView struct {
	Phase           string
	Current, Active int
	Ready           string
	// Routing is the generation the desired routing Service selects, and
	// Route its gateway-route annotation ("" without).
	Routing int
	Route   string
	// Next is the generation the desired next Service selects; -1 when
	// none is desired.
	Next         int
	Certificates []string
	Events       []string
}

func viewOf(rsp *fnv1.RunFunctionResponse) gateView {
	st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	num := func(k string) int { f, _ := st[k].(float64); return int(f) }
	v := gateView{Phase: fmt.Sprint(st["phase"]), Current: num("currentGeneration"), Active: num("activeGeneration"), Routing: -1, Next: -1}
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "EngineReady" {
			v.Ready = c.GetReason() + ": " + c.GetMessage()
		}
	}
	res := rsp.GetDesired().GetResources()
	if svc := res[string(engine.RoutingServiceKey)]; svc != nil {
		m := svc.GetResource().AsMap()
		v.Routing = selectedGeneration(m)
		md, _ := m["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		v.Route, _ = ann[contract.AnnotationGatewayRoute].(string)
	}
	if svc := res[string(engine.NextServiceKey)]; svc != nil {
		v.Next = selectedGeneration(svc.GetResource().AsMap())
		if name := svc.GetResource().AsMap()["metadata"].(map[string]any)["name"]; name != contract.NextService(simEngine) {
			v.Next = -2 // misnamed
		}
	}
	for name, r := range res {
		if r.GetResource().AsMap()["kind"] == "Certificate" {
			v.Certificates = append(v.Certificates, name)
		}
	}
	sort.Strings(v.Certificates)
	for _, r := range rsp.GetResults() {
		v.Events = append(v.Events, r.GetReason()+": "+r.GetMessage())
	}
	return v
}

// gateStep is one reconcile of a scripted engine-TLS scenario: what
// changes around the engine first, then the view of its response;
// lostStatus loses the reconcile's status write (its other writes go
// through).
type gateStep struct {
	name       string
	act        func(s *tlsSim)
	lostStatus bool
	want       gateView
}

// runGate runs steps one reconcile each, diffing every response.
func runGate(t *testing.T, s *tlsSim, steps []gateStep) {
	t.Helper()
	for _, st := range steps {
		if st.act != nil {
			st.act(s)
		}
		status, conditions := runtime.DeepCopyJSONValue(s.xr.Object["status"]), maps.Clone(s.conditions)
		s.Step()
		if st.lostStatus {
			s.xr.Object["status"], s.conditions = status, conditions
			s.history = append(s.history, "  the status write is lost")
		}
		if diff := cmp.Diff(st.want, viewOf(s.lastRsp)); diff != "" {
			t.Fatalf("%s: response: -want, +got:\n%s\nhistory:\n%s", st.name, diff, strings.Join(s.history, "\n"))
		}
	}
}

// newGateSim is an engine of two replicas on image on a ready instance
// whose gateway has two pods and rolls one step after it is asked to; tls
// says whether the instance enables engine TLS. It returns once the
// engine and its gateway have settled.
func newGateSim(t *testing.T, tls bool, image string) *tlsSim {
	t.Helper()
	s := newTLSSim(t, tlsScripted{}, fixtureSpec(image, 2), 2)
	s.tlsOn = tls
	s.speed = len(s.pods)
	s.settle(40)
	return s
}

const (
	msgTrust = "waiting for every gateway pod to trust the CA of generation %d's certificate (SHA-256 %s)"
	msgNext  = "switching generation %d to %s: waiting for every gateway pod to reach it by Service demo-next"
)

func ready(gen int) string { return fmt.Sprintf("EngineReady: serving traffic on generation %d", gen) }
func rolling(gen int) string {
	return fmt.Sprintf("Rolling: Engine is rolling out generation %d", gen)
}
func held(format string, args ...any) string {
	return "WaitingForGateway: " + fmt.Sprintf(format, args...)
}
func certs(gens ...int) []string {
	if len(gens) == 0 {
		return nil // as viewOf has no Certificates
	}
	out := make([]string, 0, len(gens))
	for _, g := range gens {
		out = append(out, fmt.Sprintf("g%d-certificate", g))
	}
	return out
}

func freeze(s *tlsSim)   { s.speed = 0 }
func unfreeze(s *tlsSim) { s.speed = len(s.pods) }

// TestTLSGateHoldsForTrust: a TLS generation of a new CA is ready, and the
// engine keeps the routing Service on the generation serving until every
// gateway pod trusts that CA; it then switches as any rollout does.
func TestTLSGateHoldsForTrust(t *testing.T) {
	s := newGateSim(t, true, "ghcr.io/firebolt-db/engine:v1")
	ca1 := simCAs()[1].fp
	runGate(t, s, []gateStep{
		{name: "new generation", act: func(s *tlsSim) {
			freeze(s)
			s.ca = 1
			s.SetSpec(fixtureSpec("ghcr.io/firebolt-db/engine:v2", 2))
		}, want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: "demo-service;tls", Next: -1,
			Certificates: certs(0), Events: []string{"NewGeneration: Creating generation 1 to replace generation 0"}}},
		{name: "its objects and Certificate", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: "demo-service;tls", Next: -1,
			Certificates: certs(0, 1)}},
		{name: "ready, its CA not trusted", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: held(msgTrust, 1, ca1), Routing: 0, Route: "demo-service;tls", Next: -1,
			Certificates: certs(0, 1)}},
		{name: "still held while the gateway is stuck", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: held(msgTrust, 1, ca1), Routing: 0, Route: "demo-service;tls", Next: -1,
			Certificates: certs(0, 1)}},
		{name: "released once rolled", act: unfreeze, want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: rolling(1), Routing: 1, Route: "demo-service;tls", Next: -1,
			Certificates: certs(0, 1)}},
		{name: "switched", want: gateView{Phase: "draining", Current: 1, Active: 1, Ready: rolling(1), Routing: 1, Route: "demo-service;tls", Next: -1,
			Certificates: certs(0, 1), Events: []string{"Switched: Routing traffic to generation 1; draining generation 0"}}},
	})
	s.settle(20)
}

// TestTLSGateHoldsForCertManager: a ready TLS generation whose
// CertificateRequest says nothing usable of its CA waits for cert-manager,
// whatever the gateway trusts.
func TestTLSGateHoldsForCertManager(t *testing.T) {
	s := newGateSim(t, true, "ghcr.io/firebolt-db/engine:v1")
	s.SetSpec(fixtureSpec("ghcr.io/firebolt-db/engine:v2", 2))
	s.ca = 1
	freeze(s)
	for range 3 {
		s.Step()
	}
	if v := viewOf(s.lastRsp); v.Ready != held(msgTrust, 1, simCAs()[1].fp) {
		t.Fatalf("not held for trust: %+v", v)
	}
	// Every gateway pod trusts every CA: only what cert-manager says
	// holds the switch.
	all := []string{simCAs()[0].fp, simCAs()[1].fp, simCAs()[2].fp}
	s.SetInstanceTLS(simIssuer.DeepCopy(), all, &v1alpha1.EngineUpstreamStatus{TLS: true})
	request := func(t *testing.T) *fnv1.RunFunctionRequest {
		req := s.Request()
		if got := len(req.GetRequiredResources()[engine.RequirementServingCert].GetItems()); got != 1 {
			t.Fatalf("the request carries %d CertificateRequests, want 1", got)
		}
		return req
	}
	issue := func(req *fnv1.RunFunctionRequest) *structpb.Struct {
		return req.GetRequiredResources()[engine.RequirementServingCert].GetItems()[0].GetResource().GetFields()["status"].GetStructValue()
	}
	leaf := simCAs()[1].leaves[0]
	waiting := held("waiting for cert-manager to issue generation 1's certificate (Certificate demo-g1-engine-tls)")
	cases := map[string]struct {
		mutate func(*fnv1.RunFunctionRequest)
		ready  string
		phase  string
		route  int
	}{
		"Issued":          {mutate: func(*fnv1.RunFunctionRequest) {}, ready: rolling(1), phase: "switching", route: 1},
		"RequestNotFound": {mutate: func(req *fnv1.RunFunctionRequest) { req.RequiredResources[engine.RequirementServingCert].Items = nil }, ready: waiting, phase: "creating"},
		"NoCA":            {mutate: func(req *fnv1.RunFunctionRequest) { delete(issue(req).GetFields(), "ca") }, ready: waiting, phase: "creating"},
		"CAIsALeaf":       {mutate: func(req *fnv1.RunFunctionRequest) { issue(req).Fields["ca"] = structpb.NewStringValue(b64(leaf)) }, ready: waiting, phase: "creating"},
		"CANotBase64":     {mutate: func(req *fnv1.RunFunctionRequest) { issue(req).Fields["ca"] = structpb.NewStringValue("%%%") }, ready: waiting, phase: "creating"},
		"CANotPEM":        {mutate: func(req *fnv1.RunFunctionRequest) { issue(req).Fields["ca"] = structpb.NewStringValue(b64("hello")) }, ready: waiting, phase: "creating"},
		"CANotAString":    {mutate: func(req *fnv1.RunFunctionRequest) { issue(req).Fields["ca"] = structpb.NewNumberValue(7) }, ready: waiting, phase: "creating"},
		"CAHuge": {mutate: func(req *fnv1.RunFunctionRequest) {
			issue(req).Fields["ca"] = structpb.NewStringValue(strings.Repeat("A", 1<<20))
		}, ready: waiting, phase: "creating"},
		"StatusNotAnObject": {mutate: func(req *fnv1.RunFunctionRequest) {
			req.RequiredResources[engine.RequirementServingCert].Items[0].Resource.Fields["status"] = structpb.NewStringValue("x")
		}, ready: waiting, phase: "creating"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := request(t)
			tc.mutate(req)
			v := viewOf(runEngine(t, req))
			want := gateView{Phase: tc.phase, Current: 1, Active: 0, Ready: tc.ready, Routing: tc.route, Route: "demo-service;tls", Next: -1, Certificates: certs(0, 1)}
			if diff := cmp.Diff(want, v); diff != "" {
				t.Errorf("-want, +got:\n%s", diff)
			}
		})
	}
}

// TestTLSGateProtocolSwitch: a switch between plain HTTP and TLS keeps the
// routing Service on the generation serving, composes the next Service
// selecting the new one and, once that Service is observed (never before:
// no gateway pod may be sent to a Service that does not exist), asks the
// gateway to reach it there in its protocol; it moves the routing Service
// once every gateway pod does,
// then asks for the routing Service in the new protocol and keeps the
// next Service until every pod reaches the engine that way.
func TestTLSGateProtocolSwitch(t *testing.T) {
	switched := []string{"Switched: Routing traffic to generation 1; draining generation 0"}
	drained := []string{"Drained: Generation 0 drained: no pod serves queries"}
	cleaned := []string{"Cleaned: Deleted generation 0"}
	cases := map[string]struct {
		from bool
		// route and next are what the routing Service publishes before
		// and after the switch, and next its route during it; proto names
		// the new protocol; certs are the Certificates composed
		// before, during and after the switch.
		before, during, after, proto         string
		certsBefore, certsDuring, certsAfter []string
		// trust is the hold for the new generation's CA, when it has one.
		trust string
	}{
		"PlainToTLS": {
			from: false, before: "", during: "demo-next;tls", after: "demo-service;tls", proto: "TLS",
			certsBefore: nil, certsDuring: certs(1), certsAfter: certs(1),
			trust: held(msgTrust, 1, simCAs()[0].fp),
		},
		"TLSToPlain": {
			from: true, before: "demo-service;tls", during: "demo-next;plain", after: "", proto: "plain HTTP",
			certsBefore: certs(0), certsDuring: certs(0), certsAfter: nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newGateSim(t, tc.from, "ghcr.io/firebolt-db/engine:v1")
			steps := []gateStep{
				{name: "new generation", act: func(s *tlsSim) { freeze(s); s.tlsOn = !tc.from },
					want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: tc.before, Next: -1,
						Certificates: tc.certsBefore, Events: []string{"NewGeneration: Creating generation 1 to replace generation 0"}}},
				{name: "its objects", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: tc.before, Next: -1,
					Certificates: tc.certsDuring}},
			}
			if tc.trust != "" {
				steps = append(steps, gateStep{name: "held for trust", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: tc.trust,
					Routing: 0, Route: tc.before, Next: -1, Certificates: tc.certsDuring}})
			}
			steps = append(steps,
				gateStep{name: "next Service composed, its route not published yet", act: unfreeze,
					want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: tc.before, Next: 1, Certificates: tc.certsDuring}},
				gateStep{name: "next Service observed: its route published, held until the gateway reaches it", act: freeze,
					want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: held(msgNext, 1, tc.proto), Routing: 0, Route: tc.during, Next: 1, Certificates: tc.certsDuring}},
				gateStep{name: "still held", want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: held(msgNext, 1, tc.proto), Routing: 0, Route: tc.during, Next: 1, Certificates: tc.certsDuring}},
				gateStep{name: "routing Service moved", act: unfreeze,
					want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: rolling(1), Routing: 1, Route: tc.during, Next: 1, Certificates: tc.certsDuring}},
				gateStep{name: "switched: the new route asked for, the next Service kept", act: freeze,
					want: gateView{Phase: "draining", Current: 1, Active: 1, Ready: rolling(1), Routing: 1, Route: tc.after, Next: 1, Certificates: tc.certsDuring, Events: switched}},
				gateStep{name: "drained, the next Service kept", want: gateView{Phase: "cleaning", Current: 1, Active: 1, Ready: rolling(1), Routing: 1, Route: tc.after, Next: 1,
					Certificates: tc.certsDuring, Events: drained}},
				gateStep{name: "stable, the next Service kept", want: gateView{Phase: "stable", Current: 1, Active: 1, Ready: ready(1), Routing: 1, Route: tc.after, Next: 1,
					Certificates: tc.certsAfter, Events: cleaned}},
				gateStep{name: "still kept while the gateway is stuck", want: gateView{Phase: "stable", Current: 1, Active: 1, Ready: ready(1), Routing: 1, Route: tc.after, Next: 1,
					Certificates: tc.certsAfter}},
				gateStep{name: "the next Service dropped once every pod reaches the routing Service", act: unfreeze,
					want: gateView{Phase: "stable", Current: 1, Active: 1, Ready: ready(1), Routing: 1, Route: tc.after, Next: -1, Certificates: tc.certsAfter}},
			)
			runGate(t, s, steps)
			s.settle(10)
		})
	}
}

// TestTLSRenewalRollsAGeneration: cert-manager issues the serving
// generation's certificate again, which its pods read only when they
// start: the engine rolls a generation that serves the new one, and rests
// there. Reading the same issue again rolls nothing.
func TestTLSRenewalRollsAGeneration(t *testing.T) {
	s := newGateSim(t, true, "ghcr.io/firebolt-db/engine:v1")
	runGate(t, s, []gateStep{
		{name: "at rest", want: gateView{Phase: "stable", Current: 0, Active: 0, Ready: ready(0), Routing: 0, Route: "demo-service;tls", Next: -1, Certificates: certs(0)}},
		{name: "renewed", act: func(s *tlsSim) { s.Renew(0) }, want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: "demo-service;tls", Next: -1,
			Certificates: certs(0), Events: []string{"NewGeneration: Creating generation 1 to replace generation 0 (cert-manager issued its certificate again, which its pods read only when they start)"}}},
	})
	s.settle(20)
	if st := s.Status(); st.ActiveGeneration != 1 || st.ObservedEngineServingCertGen == nil || *st.ObservedEngineServingCertGen != 1 ||
		st.ObservedEngineServingCertFP != s.certs[certKey(1)].current.cert {
		t.Errorf("settled on generation %d with serving certificate %v of generation %v, want generation 1's current issue %s",
			st.ActiveGeneration, st.ObservedEngineServingCertFP, st.ObservedEngineServingCertGen, s.certs[certKey(1)].current.cert)
	}
}

// TestTLSFixedSequences replays, one reconcile each, the sequences that
// found bugs in the engine-TLS gate:
//
//   - RenewedWhileRollingOut: cert-manager issues the new generation's
//     certificate again while the rollout to it is under way, after its
//     pods read the first issue. The first issue is what the engine keeps
//     (not the last one seen before the rollout ended), so once at rest it
//     rolls a generation that serves the renewal.
//   - LostStatusWritesAfterNextPublished: the status writes of the call
//     that moved to switching and of the one that asked the gateway to
//     reach the new generation by the next Service are lost, and the spec
//     changes. Found in phase creating, the engine completes the switch
//     (the next Service kept, the generation never abandoned) and rolls
//     the spec change after it.
//   - RenewedUnderAnotherCABeforeTheSwitch: the new generation's pods
//     serve a certificate of a CA the gateway does not trust yet, and
//     cert-manager issues it again under a CA the gateway trusts. The
//     gate must not pass on the new issue's CA (its pods still serve the
//     first one): the generation is abandoned before it serves traffic,
//     and the next one, serving the new issue, is switched to.
//   - AbandonedFirstGenerationStillSelected: the first TLS generation is
//     abandoned (the spec changed) while the routing Service selects it:
//     its Certificate, and so its CA in the gateway's trust, lives as long
//     as its StatefulSet is observed, also on the call that deletes it.
func TestTLSFixedSequences(t *testing.T) {
	v1, v2 := "ghcr.io/firebolt-db/engine:v1", "ghcr.io/firebolt-db/engine:v2"
	renewed := "NewGeneration: Creating generation 2 to replace generation 1 (cert-manager issued its certificate again, which its pods read only when they start)"
	cases := map[string]struct {
		start func(t *testing.T) *tlsSim
		steps []gateStep
		// active is the generation the engine settles on.
		active int
	}{
		"RenewedWhileRollingOut": {
			start: func(t *testing.T) *tlsSim { return newGateSim(t, true, v1) },
			steps: []gateStep{
				{name: "new generation", act: func(s *tlsSim) { s.SetSpec(fixtureSpec(v2, 2)) },
					want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: "demo-service;tls", Next: -1,
						Certificates: certs(0), Events: []string{"NewGeneration: Creating generation 1 to replace generation 0"}}},
				{name: "its objects and Certificate", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: "demo-service;tls", Next: -1,
					Certificates: certs(0, 1)}},
				{name: "issued, its pods serve it: switching", want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: rolling(1), Routing: 1, Route: "demo-service;tls", Next: -1,
					Certificates: certs(0, 1)}},
				{name: "renewed while rolling out", act: func(s *tlsSim) {
					if !s.Renew(1) || s.certs[certKey(1)].revision != 2 {
						s.fail("generation 1's certificate not renewed")
					}
				}, want: gateView{Phase: "draining", Current: 1, Active: 1, Ready: rolling(1), Routing: 1, Route: "demo-service;tls", Next: -1,
					Certificates: certs(0, 1), Events: []string{"Switched: Routing traffic to generation 1; draining generation 0"}}},
				{name: "drained", want: gateView{Phase: "cleaning", Current: 1, Active: 1, Ready: rolling(1), Routing: 1, Route: "demo-service;tls", Next: -1,
					Certificates: certs(0, 1), Events: []string{"Drained: Generation 0 drained: no pod serves queries"}}},
				{name: "at rest", want: gateView{Phase: "stable", Current: 1, Active: 1, Ready: ready(1), Routing: 1, Route: "demo-service;tls", Next: -1,
					Certificates: certs(1), Events: []string{"Cleaned: Deleted generation 0"}}},
				{name: "the renewal rolls a generation", want: gateView{Phase: "creating", Current: 2, Active: 1, Ready: rolling(2), Routing: 1, Route: "demo-service;tls", Next: -1,
					Certificates: certs(1), Events: []string{renewed}}},
			},
			active: 2,
		},
		"LostStatusWritesAfterNextPublished": {
			start: func(t *testing.T) *tlsSim { return newGateSim(t, false, v1) },
			steps: []gateStep{
				{name: "new generation", act: func(s *tlsSim) { freeze(s); s.tlsOn = true },
					want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Next: -1,
						Events: []string{"NewGeneration: Creating generation 1 to replace generation 0"}}},
				{name: "its objects", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Next: -1, Certificates: certs(1)}},
				{name: "held for trust", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: held(msgTrust, 1, simCAs()[0].fp), Routing: 0, Next: -1,
					Certificates: certs(1)}},
				{name: "switching, the next Service composed; status lost", act: unfreeze, lostStatus: true,
					want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Next: 1, Certificates: certs(1)}},
				{name: "the next route asked of the gateway; status lost", act: freeze, lostStatus: true,
					want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: "demo-next;tls", Next: 1, Certificates: certs(1)}},
				{name: "found creating, the spec changed: the switch is completed", act: func(s *tlsSim) { s.SetSpec(fixtureSpec(v2, 2)) },
					want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: held(msgNext, 1, "TLS"), Routing: 0, Route: "demo-next;tls", Next: 1,
						Certificates: certs(1)}},
				{name: "routing Service moved", act: unfreeze,
					want: gateView{Phase: "switching", Current: 1, Active: 0, Ready: rolling(1), Routing: 1, Route: "demo-next;tls", Next: 1, Certificates: certs(1)}},
				{name: "switched", want: gateView{Phase: "draining", Current: 1, Active: 1, Ready: rolling(1), Routing: 1, Route: "demo-service;tls", Next: 1,
					Certificates: certs(1), Events: []string{"Switched: Routing traffic to generation 1; draining generation 0"}}},
			},
			active: 2,
		},
		"RenewedUnderAnotherCABeforeTheSwitch": {
			start: func(t *testing.T) *tlsSim { return newGateSim(t, true, v1) },
			steps: []gateStep{
				{name: "new generation under CA1, the gateway stuck", act: func(s *tlsSim) { freeze(s); s.ca = 1; s.SetSpec(fixtureSpec(v2, 2)) },
					want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: "demo-service;tls", Next: -1,
						Certificates: certs(0), Events: []string{"NewGeneration: Creating generation 1 to replace generation 0"}}},
				{name: "its objects and Certificate", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: rolling(1), Routing: 0, Route: "demo-service;tls", Next: -1,
					Certificates: certs(0, 1)}},
				{name: "held for trust in CA1", want: gateView{Phase: "creating", Current: 1, Active: 0, Ready: held(msgTrust, 1, simCAs()[1].fp), Routing: 0, Route: "demo-service;tls", Next: -1,
					Certificates: certs(0, 1)}},
				{name: "renewed under CA0, which the gateway trusts: abandoned", act: func(s *tlsSim) {
					s.ca = 0
					if !s.Renew(1) || s.certs[certKey(1)].revision != 2 || s.served[1].ca != simCAs()[1].fp {
						s.fail("generation 1's certificate not renewed while its pods serve CA1's")
					}
				}, want: gateView{Phase: "creating", Current: 2, Active: 0, Ready: rolling(2), Routing: 0, Route: "demo-service;tls", Next: -1,
					Certificates: certs(0, 1), Events: []string{"Abandoned: Abandoned generation 1 before it served traffic: cert-manager issued its certificate again, which its pods read only when they start; creating generation 2"}}},
			},
			active: 2,
		},
		"AbandonedFirstGenerationStillSelected": {
			start: func(t *testing.T) *tlsSim {
				s := newTLSSim(t, tlsScripted{podDelay: 2}, fixtureSpec(v1, 2), 2)
				s.tlsOn, s.speed = true, len(s.pods)
				return s
			},
			steps: []gateStep{
				{name: "initialized and recorded", want: gateView{Phase: "creating", Current: 0, Active: -1, Ready: "Initializing: Engine is initializing", Routing: -1, Next: -1,
					Events: []string{"NewGeneration: Creating generation 0"}}},
				{name: "its objects and Certificate", want: gateView{Phase: "creating", Current: 0, Active: -1, Ready: rolling(0), Routing: -1, Next: -1,
					Certificates: certs(0)}},
				{name: "trusted: the routing Service selects it, its pods not ready", want: gateView{Phase: "creating", Current: 0, Active: -1, Ready: rolling(0),
					Routing: 0, Route: "demo-service;tls", Next: -1, Certificates: certs(0)}},
				{name: "abandoned", act: func(s *tlsSim) { s.SetSpec(fixtureSpec(v2, 2)) },
					want: gateView{Phase: "creating", Current: 1, Active: -1, Ready: rolling(1), Routing: 0, Route: "demo-service;tls", Next: -1,
						Certificates: certs(0), Events: []string{"Abandoned: Abandoned generation 0 before it served traffic: the spec changed; creating generation 1"}}},
				{name: "its objects deleted, its Certificate kept while its StatefulSet is observed", want: gateView{Phase: "creating", Current: 1, Active: -1, Ready: rolling(1),
					Routing: 0, Route: "demo-service;tls", Next: -1, Certificates: certs(0, 1)}},
				{name: "its StatefulSet gone: its Certificate goes", act: func(s *tlsSim) {
					if s.hasStatefulSet(0) {
						s.fail("generation 0's StatefulSet was not deleted")
					}
				}, want: gateView{Phase: "creating", Current: 1, Active: -1, Ready: rolling(1),
					Routing: 1, Route: "demo-service;tls", Next: -1, Certificates: certs(1)}},
			},
			active: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.start(t)
			runGate(t, s, tc.steps)
			s.settle(40)
			if st := s.Status(); st.ActiveGeneration != tc.active {
				t.Errorf("settled on generation %d, want %d", st.ActiveGeneration, tc.active)
			}
		})
	}
}

// gateRequests are requests of an engine in the states the gate decides
// in: at rest on TLS; switching from plain HTTP to TLS, the next Service
// observed but its route not asked of the gateway yet; switching, held
// until the gateway reaches the next Service; and at rest after that
// switch, the next Service kept while the gateway still reaches it.
func gateRequests(t *testing.T) map[string]*fnv1.RunFunctionRequest {
	t.Helper()
	out := map[string]*fnv1.RunFunctionRequest{}
	s := newGateSim(t, true, "ghcr.io/firebolt-db/engine:v1")
	out["StableTLS"] = s.Request()

	s = newGateSim(t, false, "ghcr.io/firebolt-db/engine:v1")
	freeze(s)
	s.tlsOn = true
	for range 3 {
		s.Step()
	}
	unfreeze(s)
	s.Step()
	if v := viewOf(s.lastRsp); v.Phase != "switching" || v.Next != 1 || v.Routing != 0 || v.Route != "" {
		t.Fatalf("not switching with the next Service composed, its route not asked for: %+v", v)
	}
	out["SwitchingNextComposed"] = s.Request()
	freeze(s)
	s.Step()
	if v := viewOf(s.lastRsp); v.Phase != "switching" || v.Next != 1 || v.Routing != 0 || v.Route != "demo-next;tls" {
		t.Fatalf("not switching through the next Service: %+v", v)
	}
	out["SwitchingToTLS"] = s.Request()
	unfreeze(s)
	s.Step()
	freeze(s)
	for range 3 {
		s.Step()
	}
	if v := viewOf(s.lastRsp); v.Phase != "stable" || v.Next != 1 || v.Routing != 1 {
		t.Fatalf("not at rest with the next Service kept: %+v", v)
	}
	out["StableNextKept"] = s.Request()
	return out
}

// observedField sets a field of an observed composed resource of req (v
// nil: removes it), when it is observed; false when it is not.
func observedField(req *fnv1.RunFunctionRequest, name string, v *structpb.Value, path ...string) bool {
	r := req.GetObserved().GetResources()[name]
	if r == nil {
		return false
	}
	st := r.GetResource()
	for _, p := range path[:len(path)-1] {
		next := st.GetFields()[p].GetStructValue()
		if next == nil {
			next = &structpb.Struct{Fields: map[string]*structpb.Value{}}
			st.Fields[p] = structpb.NewStructValue(next)
		}
		st = next
	}
	if v == nil {
		delete(st.GetFields(), path[len(path)-1])
		return true
	}
	st.Fields[path[len(path)-1]] = v
	return true
}

// TestTLSHostileObservedAnnotations: the engine-TLS annotation of an
// observed StatefulSet, the gateway-route annotation of the observed
// routing Service and the selector of the observed next Service are
// writable by others. No value may panic or change where the gateway is
// sent. The recorded renderings and the instance decide, never the
// annotations: whatever they hold, the response is the one to the
// untouched request. During a protocol switch the next Service's
// selector is read: the engine asks the gateway to reach the generation
// switched to by that Service only once it is observed selecting it, so
// one selecting anything else counts as one not there yet (the response is
// the one to the request without it, which never sends the gateway
// elsewhere: it keeps the route the routing Service published before the
// switch). Without recordings (every one rejected) the observed StatefulSets
// are all the engine knows of its generations: one counts as TLS only when
// its annotation decodes into a Certificate (the decision is the one with
// the engine's own annotation, else the one without any), and a hostile
// engine-TLS annotation must still not change where the gateway is sent:
// the generation the routing Service selects, the route it publishes and
// the next Service.
func TestTLSHostileObservedAnnotations(t *testing.T) {
	str := structpb.NewStringValue
	values := map[string]*structpb.Value{
		"Number":       structpb.NewNumberValue(42),
		"Object":       structpb.NewStructValue(resourceJSON(`{"instance": "evil"}`)),
		"List":         structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{str("demo-next;tls")}}),
		"Null":         structpb.NewNullValue(),
		"Empty":        str(""),
		"NotJSON":      str("not json"),
		"EmptyObject":  str("{}"),
		"Huge":         str(strings.Repeat("x", 1<<16)),
		"UnknownField": str(`{"instance":"inst","issuer":{"issuerRef":{"name":"engine-ca"}},"extra":1}`),
		"OtherIssuer":  str(`{"instance":"evil","issuer":{"issuerRef":{"name":"evil-ca","kind":"ClusterIssuer"}}}`),
		"OtherService": str("evil-service;tls"),
		"NextTLS":      str("demo-next;tls"),
		"NextPlain":    str("demo-next;plain"),
		"RoutingTLS":   str("demo-service;tls"),
		"BadProto":     str("demo-service;quic"),
		"Trailing":     str("demo-next;plain;x"),
		"Separator":    str(";"),
		"Selector":     str("999"),
		"Negative":     str("-1"),
		"Generation0":  str("0"),
	}
	// Values an unrecorded StatefulSet is tried with, true for those that
	// decode into a Certificate.
	unrecordedValues := map[string]bool{"Number": false, "Empty": false, "NotJSON": false, "OtherIssuer": true}
	targets := map[string]func(req *fnv1.RunFunctionRequest, v *structpb.Value) bool{
		"G0StatefulSetTLS": func(req *fnv1.RunFunctionRequest, v *structpb.Value) bool {
			return observedField(req, "g0-statefulset", v, "metadata", "annotations", engine.AnnotationEngineTLS)
		},
		"G1StatefulSetTLS": func(req *fnv1.RunFunctionRequest, v *structpb.Value) bool {
			return observedField(req, "g1-statefulset", v, "metadata", "annotations", engine.AnnotationEngineTLS)
		},
		"RoutingRoute": func(req *fnv1.RunFunctionRequest, v *structpb.Value) bool {
			return observedField(req, string(engine.RoutingServiceKey), v, "metadata", "annotations", contract.AnnotationGatewayRoute)
		},
		"NextRoute": func(req *fnv1.RunFunctionRequest, v *structpb.Value) bool {
			return observedField(req, string(engine.NextServiceKey), v, "metadata", "annotations", contract.AnnotationGatewayRoute)
		},
		"NextSelector": func(req *fnv1.RunFunctionRequest, v *structpb.Value) bool {
			return observedField(req, string(engine.NextServiceKey), v, "spec", "selector", engine.LabelGeneration)
		},
	}
	for state, base := range gateRequests(t) {
		want := runEngine(t, proto.Clone(base).(*fnv1.RunFunctionRequest))
		noNext := proto.Clone(base).(*fnv1.RunFunctionRequest)
		delete(noNext.GetObserved().GetResources(), string(engine.NextServiceKey))
		wantNoNext := runEngine(t, noNext)
		switching := viewOf(want).Phase == "switching"
		// Without recordings (all rejected, say), the observed
		// StatefulSets are all the engine knows of its generations.
		unrecorded := proto.Clone(base).(*fnv1.RunFunctionRequest)
		delete(unrecorded.GetObserved().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields(), "renderings")
		wantUnrecorded := viewOf(runEngine(t, proto.Clone(unrecorded).(*fnv1.RunFunctionRequest)))
		genuine := engineTLSAnnotation(t, base)
		for target, set := range targets {
			for value, v := range values {
				if !set(proto.Clone(base).(*fnv1.RunFunctionRequest), v) {
					continue // nothing of the kind observed in this state
				}
				t.Run(state+"/"+target+"/"+value, func(t *testing.T) {
					req := proto.Clone(base).(*fnv1.RunFunctionRequest)
					set(req, v)
					w, of := want, "untouched"
					if target == "NextSelector" && switching {
						w, of = wantNoNext, "without the next Service"
					}
					if diff := cmp.Diff(w, runEngine(t, req), protocmp.Transform()); diff != "" {
						t.Errorf("the response is not the one %s: -%s, +hostile:\n%s", of, of, diff)
					}
				})
				decodes, tried := unrecordedValues[value]
				if !strings.HasSuffix(target, "StatefulSetTLS") || !tried {
					continue
				}
				t.Run(state+"/"+target+"Unrecorded/"+value, func(t *testing.T) {
					req := proto.Clone(unrecorded).(*fnv1.RunFunctionRequest)
					set(req, v)
					got := viewOf(runEngine(t, req))
					ref, as := proto.Clone(unrecorded).(*fnv1.RunFunctionRequest), "with the engine's own annotation"
					if decodes {
						set(ref, genuine)
					} else {
						set(ref, nil)
						as = "without the annotation"
					}
					if diff := cmp.Diff(viewOf(runEngine(t, ref)), got); diff != "" {
						t.Errorf("the decision is not the one %s: -%s, +hostile:\n%s", as, as, diff)
					}
					if got.Routing != wantUnrecorded.Routing || got.Route != wantUnrecorded.Route || got.Next != wantUnrecorded.Next {
						t.Errorf("the gateway is sent elsewhere: routing Service on generation %d with route %q, next Service on %d; untouched %d, %q, %d",
							got.Routing, got.Route, got.Next, wantUnrecorded.Routing, wantUnrecorded.Route, wantUnrecorded.Next)
					}
				})
			}
		}
	}
}

// engineTLSAnnotation is the engine-TLS annotation of a TLS generation's
// observed StatefulSet in req, as the engine wrote it.
func engineTLSAnnotation(t *testing.T, req *fnv1.RunFunctionRequest) *structpb.Value {
	t.Helper()
	for _, name := range []string{"g0-statefulset", "g1-statefulset"} {
		r := req.GetObserved().GetResources()[name]
		ann := r.GetResource().GetFields()["metadata"].GetStructValue().GetFields()["annotations"].GetStructValue()
		if v := ann.GetFields()[engine.AnnotationEngineTLS]; v != nil {
			return proto.Clone(v).(*structpb.Value)
		}
	}
	t.Fatal("no observed StatefulSet carries the engine-TLS annotation")
	return nil
}

// TestTLSHostileRolledRoute: the instance reports, for this engine, a
// route to a Service that is not the engine's, or to its next Service
// while the engine has not asked the gateway for it (its observed routing
// Service does not publish it: before a switch, or during one while the
// next Service was not yet observed), or in an unknown shape. The engine
// never moves its routing Service for it, never publishes another route
// than its own, and composes a next Service only selecting a generation of
// its own.
func TestTLSHostileRolledRoute(t *testing.T) {
	routes := map[string][]v1alpha1.EngineRoute{
		"OtherService": {{Engine: simEngine, Service: "evil-service", TLS: true}},
		"OtherEngine":  {{Engine: "evil", Service: "evil-next", TLS: true}},
		"NextTLS":      {{Engine: simEngine, Service: contract.NextService(simEngine), TLS: true}},
		"NextPlain":    {{Engine: simEngine, Service: contract.NextService(simEngine)}},
		"Empty":        {{Engine: simEngine}},
		"Duplicate":    {{Engine: simEngine, Service: contract.NextService(simEngine), TLS: true}, {Engine: simEngine, Service: "evil-service"}},
	}
	for state, base := range gateRequests(t) {
		want := viewOf(runEngine(t, proto.Clone(base).(*fnv1.RunFunctionRequest)))
		asked := observedRoute(base)
		for name, rs := range routes {
			for _, def := range []bool{false, true} {
				// The route the engine asked for is the one the switch
				// waits for: TestTLSGateProtocolSwitch covers it.
				if r := rs[0]; r.Engine == simEngine && r.Service == contract.NextService(simEngine) &&
					(contract.GatewayRoute{Service: r.Service, TLS: r.TLS}).String() == asked {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/tls=%v", state, name, def), func(t *testing.T) {
					req := proto.Clone(base).(*fnv1.RunFunctionRequest)
					withRolledUpstream(t, req, &v1alpha1.EngineUpstreamStatus{TLS: def, Routes: rs})
					got := viewOf(runEngine(t, req))
					if got.Routing != want.Routing {
						t.Errorf("the routing Service selects generation %d, untouched %d", got.Routing, want.Routing)
					}
					if r, ok := contract.ParseGatewayRoute(simEngine, got.Route); got.Route != "" && (!ok || r.String() != got.Route) {
						t.Errorf("the routing Service publishes route %q, not one of the engine's", got.Route)
					}
					if got.Route != want.Route {
						t.Errorf("the routing Service publishes route %q, untouched %q", got.Route, want.Route)
					}
					if got.Next != -1 && got.Next != want.Routing && got.Next != want.Current {
						t.Errorf("the next Service selects generation %d, neither the routed %d nor the current %d", got.Next, want.Routing, want.Current)
					}
					if got.Phase != want.Phase || got.Active != want.Active || got.Current != want.Current {
						t.Errorf("phase %s, current %d, active %d; untouched %s, %d, %d", got.Phase, got.Current, got.Active, want.Phase, want.Current, want.Active)
					}
				})
			}
		}
	}
}

// observedRoute is the gateway-route annotation of req's observed routing
// Service: the route the engine last asked of the gateway ("" for none).
func observedRoute(req *fnv1.RunFunctionRequest) string {
	svc := req.GetObserved().GetResources()[string(engine.RoutingServiceKey)]
	ann := svc.GetResource().GetFields()["metadata"].GetStructValue().GetFields()["annotations"].GetStructValue()
	return ann.GetFields()[contract.AnnotationGatewayRoute].GetStringValue()
}

// withRolledUpstream makes the instance's state a request hands in report
// up as the rolled upstream.
func withRolledUpstream(t *testing.T, req *fnv1.RunFunctionRequest, up *v1alpha1.EngineUpstreamStatus) {
	t.Helper()
	items := req.GetRequiredResources()[engine.RequirementInstanceState].GetItems()
	if len(items) != 1 {
		t.Fatalf("the request carries %d instance states, want 1", len(items))
	}
	data := items[0].GetResource().GetFields()["data"].GetStructValue()
	st, problem := instancestate.Decode(map[string]string{instancestate.Key: data.GetFields()[instancestate.Key].GetStringValue()})
	if problem != "" {
		t.Fatal(problem)
	}
	st.RolledEngineUpstream = up
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	data.Fields[instancestate.Key] = structpb.NewStringValue(string(b))
}
