package instance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// A gateway posture as a pod serves it: closed (no client listener),
// plain (rank 0), TLS (1) or mutual TLS (2) with a client CA.
type servedPosture struct {
	closed bool
	rank   int
	ca     string
}

// weakerThan: a pod serving p accepts a client that one serving s refuses.
func (p servedPosture) weakerThan(s servedPosture) bool {
	if p.closed || s.closed {
		return false
	}
	return p.rank < s.rank || (p.rank == 2 && s.rank == 2 && p.ca != s.ca)
}

// The specs the model moves between, with the posture each asks for.
var tlsModelSpecs = []struct {
	spec string
	want servedPosture
}{
	{`{metadata: {}, gateway: {}}`, servedPosture{}},
	{tlsSpec(""), servedPosture{rank: 1}},
	{`{metadata: {}, gateway: {}, tls: {gateway: {enabled: true, secretRef: {name: mine}}}}`, servedPosture{rank: 1}},
	{tlsSpec(", clientCASecretRef: {name: ca-a}"), servedPosture{rank: 2, ca: "ca-a"}},
	{tlsSpec(", clientCASecretRef: {name: ca-b}"), servedPosture{rank: 2, ca: "ca-b"}},
	{tlsSpec(", clientCASecretRef: {name: ca-a}, crlSecretRef: {name: crl}"), servedPosture{rank: 2, ca: "ca-a"}},
}

// fataler is what the world fails through: a rapid.T, or a testing.T
// for a fixed sequence.
type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

type modelPod struct {
	hash string
	// born is the spec edit the function had seen when the pod was
	// created.
	born int
}

// tlsWorld is an instance whose gateway a Deployment controller rolls as
// Kubernetes does: with maxUnavailable 100% every old pod goes before a
// new one starts; with maxSurge one new pod starts before an old one goes.
type tlsWorld struct {
	t        fataler
	spec     int
	edits    int
	known    int // the edit the function last saw
	status   map[string]any
	template map[string]any // the gateway Deployment as last applied
	gen      int
	observed int
	pods     []modelPod
	postures map[string]servedPosture // by config hash
	issued   bool
}

func (w *tlsWorld) hashOf(d map[string]any) string {
	tpl := d["spec"].(map[string]any)["template"].(map[string]any)
	return tpl["metadata"].(map[string]any)["annotations"].(map[string]any)["firebolt.io/config-hash"].(string)
}

func (w *tlsWorld) staging() bool {
	ru := w.template["spec"].(map[string]any)["strategy"].(map[string]any)["rollingUpdate"].(map[string]any)
	return ru["maxUnavailable"] == "100%"
}

// call runs the function on what the world holds and applies its answer;
// lose drops its status write, as a failed write after the apply does.
func (w *tlsWorld) call(t *testing.T, lose bool) {
	o := observedRunning(t)
	if w.template != nil {
		d := obj(w.template).with(t, "metadata.generation", w.gen, "status", map[string]any{
			"observedGeneration": w.observed, "replicas": len(w.pods), "updatedReplicas": w.count(w.hashOf(w.template)),
			"readyReplicas": len(w.pods), "availableReplicas": len(w.pods),
		})
		o["gateway"] = d
	}
	if w.issued {
		o["gateway-tls"] = issued(t, wantGatewayCertificate(t))
	} else {
		o["gateway-tls"] = wantGatewayCertificate(t)
	}
	w.known = w.edits
	x := xr(t, tlsModelSpecs[w.spec].spec, `{phase: Ready, id: `+derivedID+`}`)
	if w.status != nil {
		x = x.with(t, "status.gatewayTLS", w.status)
	}
	rsp, err := function(noPassword(t)).RunFunction(context.Background(), request{xr: x, observed: o}.build(t))
	if err != nil {
		w.t.Fatal(err)
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			w.t.Fatalf("fatal: %s", r.GetMessage())
		}
	}
	res := rsp.GetDesired().GetResources()
	d := res["gateway"].GetResource().AsMap()
	envoy := res["gateway-config"].GetResource().AsMap()["data"].(map[string]any)["envoy.yaml"].(string)
	hash := w.hashOf(d)
	p := servedPosture{closed: !strings.Contains(envoy, "port_value: 8080")}
	vols := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["volumes"].([]any)
	for _, v := range vols {
		v := v.(map[string]any)
		switch v["name"] {
		case "tls-gateway":
			p.rank = max(p.rank, 1)
		case "client-ca":
			p.rank = 2
			src := v["projected"].(map[string]any)["sources"].([]any)[0].(map[string]any)
			p.ca = src["secret"].(map[string]any)["name"].(string)
		}
	}
	if old, seen := w.postures[hash]; seen && old != p {
		w.t.Fatalf("config hash %s names two postures: %+v and %+v", hash, old, p)
	}
	w.postures[hash] = p
	if w.template == nil || w.hashOf(w.template) != hash || fmt.Sprint(w.template["spec"]) != fmt.Sprint(d["spec"]) {
		w.gen++
	}
	w.template = d
	if !lose {
		st, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
		w.status, _ = st["gatewayTLS"].(map[string]any)
	}
}

func (w *tlsWorld) count(hash string) int {
	n := 0
	for _, p := range w.pods {
		if p.hash == hash {
			n++
		}
	}
	return n
}

// roll is one step of the Deployment controller towards 2 replicas of
// the template.
func (w *tlsWorld) roll() {
	if w.template == nil {
		return
	}
	w.observed = w.gen
	want := w.hashOf(w.template)
	if w.staging() {
		var kept []modelPod
		for _, p := range w.pods {
			if p.hash == want {
				kept = append(kept, p)
			}
		}
		if len(kept) != len(w.pods) {
			w.pods = kept
			return
		}
		if len(w.pods) < 2 {
			w.pods = append(w.pods, modelPod{hash: want, born: w.known})
		}
		return
	}
	switch {
	case w.count(want) < 2 && len(w.pods) < 3:
		w.pods = append(w.pods, modelPod{hash: want, born: w.known})
	case len(w.pods) > 2 || w.count(want) < len(w.pods):
		for i, p := range w.pods {
			if p.hash != want {
				w.pods = append(w.pods[:i], w.pods[i+1:]...)
				return
			}
		}
	}
}

// check: once the function has seen the spec, no pod it starts (closed
// or serving) runs beside a pod that serves a posture weaker than the
// spec's: a tightening stops every weaker pod before anything new starts.
func (w *tlsWorld) check() {
	want := tlsModelSpecs[w.spec].want
	for _, p := range w.pods {
		if p.born < w.edits {
			continue
		}
		for _, q := range w.pods {
			if qp := w.postures[q.hash]; qp.weakerThan(want) {
				w.t.Fatalf("spec asks for %+v; pod %v started since the function saw it, beside one serving %+v (pods %v, postures %v)",
					want, w.postures[p.hash], qp, w.pods, w.postures)
			}
		}
	}
}

// TestGatewayTightensFailClosed drives an instance's gateway through
// random spec edits, issuance, lost status writes and Deployment rollouts,
// through RunFunction: no pod created for a posture ever serves beside a
// pod of a weaker one, and once the world rests the gateway serves the
// spec's posture and says so.
func TestGatewayTightensFailClosed(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := &tlsWorld{t: rt, postures: map[string]servedPosture{}}
		// Start from a Ready plain gateway.
		w.call(t, false)
		for range 3 {
			w.roll()
		}
		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for range steps {
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1:
				w.spec = rapid.IntRange(0, len(tlsModelSpecs)-1).Draw(rt, "spec")
				w.edits++
			case 2:
				w.issued = true
			case 3:
				w.call(t, true)
			case 4, 5, 6:
				w.call(t, false)
			default:
				w.roll()
			}
			w.check()
		}
		w.issued = true
		for range 12 {
			w.call(t, false)
			w.roll()
			w.check()
		}
		want := tlsModelSpecs[w.spec].want
		for _, p := range w.pods {
			if got := w.postures[p.hash]; got != want {
				rt.Fatalf("at rest a pod serves %+v, the spec asks for %+v", got, want)
			}
		}
		if (want.rank > 0) != (w.status != nil) {
			rt.Fatalf("at rest status.gatewayTLS = %v for %+v", w.status, want)
		}
	})
}

// TestGatewayTightensAfterALostLoosening replays the sequence that found
// the status alone too weak a witness of what the gateway serves: mutual
// TLS at rest, then a loosening to TLS whose status write is lost while
// the Deployment rolls to it, then mutual TLS again. The status still
// names mutual TLS, but pods serve TLS: asking for mutual TLS is a
// tightening, staged closed, and no mutual-TLS pod starts beside a TLS one.
func TestGatewayTightensAfterALostLoosening(t *testing.T) {
	w := &tlsWorld{t: t, postures: map[string]servedPosture{}, issued: true}
	settle := func() {
		for range 8 {
			w.call(t, false)
			w.roll()
			w.check()
		}
	}
	w.call(t, false)
	w.roll()
	w.spec, w.edits = 3, w.edits+1 // mutual TLS, client CA ca-a
	settle()
	if got := w.postures[w.pods[0].hash]; got != tlsModelSpecs[3].want {
		t.Fatalf("at rest the gateway serves %+v, want %+v", got, tlsModelSpecs[3].want)
	}
	w.spec, w.edits = 1, w.edits+1 // TLS
	w.call(t, true)                // its status write is lost
	for range 3 {
		w.roll()
		w.check()
	}
	w.spec, w.edits = 3, w.edits+1 // mutual TLS again
	settle()
	for _, p := range w.pods {
		if got := w.postures[p.hash]; got != tlsModelSpecs[3].want {
			t.Fatalf("at rest a pod serves %+v, want %+v", got, tlsModelSpecs[3].want)
		}
	}
}

// TestGatewayTighteningSurvivesALostRecord: the call that finds every pod
// closed records the tightened posture and renders it in one answer. Were
// that status write lost (a crash, or Crossplane's status apply refused on
// an older copy), the next calls find that posture's template already
// rendered, which only a completed staging renders, and keep it; they do
// not close the gateway again (an end-to-end run saw mutual TLS roll out,
// back to closed, and out again).
func TestGatewayTighteningSurvivesALostRecord(t *testing.T) {
	w := &tlsWorld{t: t, postures: map[string]servedPosture{}, issued: true}
	w.call(t, false)
	w.roll()
	w.spec, w.edits = 1, w.edits+1 // TLS
	for range 8 {
		w.call(t, false)
		w.roll()
		w.check()
	}
	w.spec, w.edits = 3, w.edits+1 // mutual TLS, client CA ca-a
	for i := 0; ; i++ {
		if i == 16 {
			t.Fatal("the tightening to mutual TLS never rendered it")
		}
		before := w.status
		w.call(t, false)
		if !w.postures[w.hashOf(w.template)].closed {
			w.status = before // the call that renders mutual TLS: its status write is lost
			break
		}
		w.roll()
		w.check()
	}
	rendered := w.hashOf(w.template)
	if got := w.postures[rendered]; got != tlsModelSpecs[3].want {
		t.Fatalf("with every pod closed the function renders %+v, want %+v", got, tlsModelSpecs[3].want)
	}
	for i := range 8 {
		w.roll()
		w.check()
		w.call(t, false)
		if got := w.hashOf(w.template); got != rendered {
			t.Fatalf("call %d after the lost record renders %+v, want mutual TLS kept", i+1, w.postures[got])
		}
	}
}
