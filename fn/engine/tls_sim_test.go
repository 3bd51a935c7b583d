package engine_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/logging"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/certmanager"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// The engine-TLS simulation: the sim (Crossplane, the API server and the
// StatefulSet controller) plus what an engine serving TLS depends on
// outside itself:
//
//   - cert-manager, with a CA issuer whose CA can change: it issues an
//     applied Certificate some steps later (status.revision, a Ready
//     condition for metadata.generation, and the CertificateRequest
//     <name>-<revision> with status.ca and status.certificate), issues it
//     again on a renewal, and deletes its requests with it. Once the
//     Certificate is Ready again after an issue it keeps the newest
//     spec.revisionHistoryLimit requests (1 when unset, as cert-manager
//     defaults it) and deletes the older ones. A generation's
//     pods cannot start before its Secret exists, and serve the
//     certificate current when they do (read at start, never again).
//   - the instance and its gateway: the instance lists the engine's
//     routing Service's route and the CAs of every engine
//     CertificateRequest, and rolls the gateway to that configuration;
//     the gateway is a set of pods each holding one configuration, which a
//     rollout replaces a few at a time. The instance publishes (in the
//     ConfigMap engines read) the rolled configuration once every pod
//     holds it, else the previous upstream and only the CAs both the
//     previous rolled trust and the wanted one list.

// simCA is one CA of the issuer, with leaves it signed.
type simCA struct {
	pem    string
	fp     string
	leaves []string
}

// simCAs are three distinct ECDSA P-256 CAs, made once per test binary.
var simCAs = sync.OnceValue(func() []simCA {
	out := make([]simCA, 3)
	for i := range out {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(1000 + i)), Subject: pkix.Name{CommonName: fmt.Sprintf("sim engine CA %d", i)},
			NotBefore: simEpoch.Add(-time.Hour), NotAfter: simEpoch.Add(10 * 365 * 24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		ca, err := x509.ParseCertificate(der)
		if err != nil {
			panic(err)
		}
		out[i].pem = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
		_, fp, ok := certmanager.CA(map[string]any{"status": map[string]any{"ca": b64(out[i].pem)}})
		if !ok {
			panic("a simulated CA is not a CA to certmanager.CA")
		}
		out[i].fp = fp
		leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		for j := range 16 {
			leaf := &x509.Certificate{
				SerialNumber: big.NewInt(int64(100*i + j + 1)), Subject: pkix.Name{CommonName: fmt.Sprintf("*.demo-g%d-hl.firebolt.svc.cluster.local", j)},
				DNSNames:  []string{fmt.Sprintf("*.demo-g%d-hl.firebolt.svc.cluster.local", j), "demo-service.firebolt.svc.cluster.local", "localhost"},
				NotBefore: simEpoch.Add(-time.Hour), NotAfter: simEpoch.Add(90 * 24 * time.Hour),
				KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			}
			der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &leafKey.PublicKey, key)
			if err != nil {
				panic(err)
			}
			out[i].leaves = append(out[i].leaves, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
		}
	}
	return out
})

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// simIssuer is the issuer the simulated instance names.
var simIssuer = v1alpha1.CertManagerSpec{IssuerRef: v1alpha1.IssuerRef{Name: "engine-ca", Kind: "ClusterIssuer"}}

// issue is one issue of a Certificate: the CA and the certificate's
// fingerprints.
type issue struct{ ca, cert string }

// simCert is cert-manager's state of one Certificate.
type simCert struct {
	uid, name string
	labels    map[string]any
	// issueAt is the step from which it may be issued.
	issueAt  int
	revision int
	// issuedAt is the step before which it was last issued.
	issuedAt int
	// requests are its CertificateRequests, oldest first; history is
	// how many it keeps (spec.revisionHistoryLimit).
	requests []string
	history  int
	current  issue
}

// gwConfig is one gateway pod's configuration, as far as this engine is
// concerned: the CAs it trusts, its default protocol, and this engine's
// route when it has one of its own.
type gwConfig struct {
	Trust []string
	TLS   bool
	Route *contract.GatewayRoute
}

func (c gwConfig) route(e string) contract.GatewayRoute {
	if c.Route != nil {
		return *c.Route
	}
	return contract.DefaultRoute(e, c.TLS)
}

func (c gwConfig) upstream(e string) *v1alpha1.EngineUpstreamStatus {
	if !c.TLS && c.Route == nil {
		return nil
	}
	up := &v1alpha1.EngineUpstreamStatus{TLS: c.TLS}
	if r := c.Route; r != nil {
		up.Routes = []v1alpha1.EngineRoute{{Engine: e, Service: r.Service, TLS: r.TLS}}
	}
	return up
}

func (c gwConfig) String() string {
	r := "default"
	if c.Route != nil {
		r = c.Route.String()
	}
	return fmt.Sprintf("{trust %s tls=%v route %s}", trustText(c.Trust), c.TLS, r)
}

// trustText names the CAs of fingerprints.
func trustText(fps []string) string {
	names := make([]string, len(fps))
	for i, fp := range fps {
		names[i] = caName(fp)
	}
	return "[" + strings.Join(names, " ") + "]"
}

// caName names a CA fingerprint in histories.
func caName(fp string) string {
	for i, ca := range simCAs() {
		if ca.fp == fp {
			return fmt.Sprintf("CA%d", i)
		}
	}
	return fp[:min(8, len(fp))]
}

// tlsSim is the sim with cert-manager, the instance and its gateway.
type tlsSim struct {
	*sim

	// tlsOn: the instance enables engine TLS (its anchor issued).
	tlsOn bool
	// ca is the issuer's CA (an index of simCAs).
	ca int
	// cmDelay bounds the steps cert-manager takes to issue; cmHold stops
	// it issuing.
	cmDelay int
	cmHold  bool
	certs   map[resource.Name]*simCert
	leafN   int
	// manualRenewals lets Renew issue a Certificate again at any time
	// (cmctl renew, a deleted Secret). Without it, renewals come as time
	// brings them: the simulated issuer's 90-day certificates are renewed
	// 30 days early, 60 days after they were issued, when Crossplane has
	// long since reconciled the engine (at least one step whose writes all
	// went through since the issue), and 60 days after that again, when
	// any rollout not stuck has ended (at most one renewal of each
	// Certificate: a simulation lasts minutes).
	manualRenewals bool
	// served is what each TLS generation's pods serve, once they start.
	served map[int]issue

	// pods are the gateway pods' configurations; target is what the
	// gateway rolls to; speed bounds the pods replaced per step (0: the
	// rollout is stuck).
	pods   []gwConfig
	target gwConfig
	speed  int
	// rolled is what the instance publishes.
	rolledTrust []string
	rolledUp    *v1alpha1.EngineUpstreamStatus

	// reachable: every gateway pod has once reached the engine since it
	// first switched to a generation; from then on no pod may ever fail
	// to.
	reachable bool
	// restarts counts fresh function processes.
	restarts int
	// stats count what the runs exercised.
	stats tlsStats
}

// tlsStats count what simulations exercised, so that a model that stops
// reaching the interesting paths is noticed.
type tlsStats struct {
	steps, protocolSwitches, tlsSwitches, gatewayHolds, renewalRolls, nextSteps, restarts int
}

func (a *tlsStats) add(b tlsStats) {
	a.steps += b.steps
	a.protocolSwitches += b.protocolSwitches
	a.tlsSwitches += b.tlsSwitches
	a.gatewayHolds += b.gatewayHolds
	a.renewalRolls += b.renewalRolls
	a.nextSteps += b.nextSteps
	a.restarts += b.restarts
}

func newTLSSim(t failer, d draws, spec map[string]any, gatewayPods int) *tlsSim {
	s := &tlsSim{
		sim:     newSim(t, d, spec),
		cmDelay: 2,
		certs:   map[resource.Name]*simCert{},
		served:  map[int]issue{},
		pods:    make([]gwConfig, gatewayPods),
		speed:   1,
	}
	s.certRequests = map[string]*unstructured.Unstructured{}
	s.decorate = s.certificateStatus
	s.publish()
	return s
}

// restart replaces the function with a fresh one: a new process, its
// memos empty.
func (s *tlsSim) restart() {
	s.restarts++
	s.f = fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
		v1alpha1.XFireboltEngineKind: engine.New(simProber{s.sim}, simEvents{s.sim}, engine.WithClock(s.now)),
	})
}

// certificateStatus is cert-manager's status of an observed Certificate.
func (s *tlsSim) certificateStatus(name resource.Name, obj map[string]any) {
	if obj["kind"] != "Certificate" {
		return
	}
	c := s.certs[name]
	if c == nil || c.revision == 0 {
		obj["status"] = map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": "False", "reason": "Issuing", "observedGeneration": float64(1),
		}}}
		return
	}
	obj["status"] = map[string]any{
		"revision": float64(c.revision),
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Ready", "observedGeneration": float64(1),
		}},
	}
}

// issue has cert-manager issue c (again) under the issuer's CA.
func (s *tlsSim) issue(c *simCert) {
	ca := simCAs()[s.ca]
	leaf := ca.leaves[s.leafN%len(ca.leaves)]
	s.leafN++
	c.revision++
	c.issuedAt = s.step + 1
	req := fmt.Sprintf("%s-%d", c.name, c.revision)
	c.requests = append(c.requests, req)
	s.certRequests[req] = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "CertificateRequest",
		"metadata": map[string]any{"name": req, "namespace": simNamespace, "labels": c.labels},
		"status": map[string]any{
			"ca": b64(ca.pem), "certificate": b64(leaf),
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Issued"}},
		},
	}}
	certFP := certmanager.CertificateFingerprint(s.certRequests[req].Object)
	c.current = issue{ca: ca.fp, cert: certFP}
	s.history = append(s.history, fmt.Sprintf("  cert-manager issues %s revision %d under %s", c.name, c.revision, caName(ca.fp)))
	// Ready again at once: the requests beyond its history go.
	if drop := len(c.requests) - c.history; drop > 0 {
		for _, r := range c.requests[:drop] {
			delete(s.certRequests, r)
		}
		s.history = append(s.history, fmt.Sprintf("  cert-manager deletes %s's requests %v", c.name, c.requests[:drop]))
		c.requests = slices.Clone(c.requests[drop:])
	}
}

// Renew has cert-manager issue the i-th issued Certificate again, as
// it does when one nears its expiry (only one time may have brought to
// its renewal, unless manualRenewals); false when none is.
func (s *tlsSim) Renew(i int) bool {
	var issued []string
	for n, c := range s.certs {
		if c.revision > 0 && (s.manualRenewals || (c.revision == 1 && s.cleanAt >= c.issuedAt)) {
			issued = append(issued, string(n))
		}
	}
	if len(issued) == 0 {
		return false
	}
	sort.Strings(issued)
	s.issue(s.certs[resource.Name(issued[i%len(issued)])])
	return true
}

// certManager runs cert-manager before step s.step+1: it tracks the
// Certificates that exist, issues those due, and deletes the requests of
// a Certificate with it.
func (s *tlsSim) certManager() {
	next := s.step + 1
	live := map[resource.Name]bool{}
	names := make([]string, 0, len(s.objs))
	for n := range s.objs {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		name := resource.Name(n)
		o := s.objs[name]
		if o.content["kind"] != "Certificate" {
			continue
		}
		live[name] = true
		c := s.certs[name]
		if c != nil && c.uid != o.uid {
			s.dropCert(name)
			c = nil
		}
		if c == nil {
			md := o.content["metadata"].(map[string]any)
			labels, _ := md["labels"].(map[string]any)
			history := 1
			if n, ok, _ := unstructured.NestedFieldNoCopy(o.content, "spec", "revisionHistoryLimit"); ok {
				switch n := n.(type) {
				case float64:
					history = int(n)
				case int64:
					history = int(n)
				}
			}
			c = &simCert{uid: o.uid, name: md["name"].(string), labels: labels, history: max(history, 1),
				issueAt: next + s.d.intn(0, s.cmDelay, "cert-manager delay")}
			s.certs[name] = c
		}
		if c.revision == 0 && !s.cmHold && next >= c.issueAt {
			s.issue(c)
		}
	}
	for name := range s.certs {
		if !live[name] {
			s.dropCert(name)
		}
	}
}

func (s *tlsSim) dropCert(name resource.Name) {
	for _, r := range s.certs[name].requests {
		delete(s.certRequests, r)
	}
	delete(s.certs, name)
}

// stsTLS is a StatefulSet's engine TLS: whether it carries the engine-TLS
// annotation, and its replica count.
func stsTLS(o *simObj) (tls bool, replicas int) {
	ann, _, _ := unstructured.NestedMap(o.content, "metadata", "annotations")
	_, tls = ann[engine.AnnotationEngineTLS]
	r, _, _ := unstructured.NestedFloat64(o.content, "spec", "replicas")
	return tls, int(r)
}

func certKey(gen int) resource.Name { return resource.Name(fmt.Sprintf("g%d-certificate", gen)) }
func stsKey(gen int) resource.Name  { return resource.Name(fmt.Sprintf("g%d-statefulset", gen)) }

// startPods holds a TLS generation's pods until its Secret exists (the
// volume is not optional), and records what they serve once they start.
func (s *tlsSim) startPods() {
	next := s.step + 1
	for name, o := range s.objs {
		g, ok := generationOf(name)
		if !ok || o.sts == nil {
			continue
		}
		tls, _ := stsTLS(o)
		if !tls || len(o.sts.pods) == 0 {
			continue
		}
		c := s.certs[certKey(g)]
		if c == nil || c.revision == 0 {
			for i := range o.sts.pods {
				o.sts.pods[i].readyAt = max(o.sts.pods[i].readyAt, next+1)
			}
			continue
		}
		if _, ok := s.served[g]; !ok {
			s.served[g] = c.current
		}
	}
}

// wanted is the gateway configuration the instance renders now.
func (s *tlsSim) wanted() gwConfig {
	set := map[string]bool{}
	for _, c := range s.certs {
		for _, r := range c.requests {
			if _, fp, ok := certmanager.CA(s.certRequests[r].Object); ok {
				set[fp] = true
			}
		}
	}
	w := gwConfig{TLS: s.tlsOn}
	for fp := range set {
		w.Trust = append(w.Trust, fp)
	}
	sort.Strings(w.Trust)
	if svc := s.objs[engine.RoutingServiceKey]; svc != nil {
		r := contract.DefaultRoute(s.engine, false)
		ann, _, _ := unstructured.NestedStringMap(svc.content, "metadata", "annotations")
		if p, ok := contract.ParseGatewayRoute(s.engine, ann[contract.AnnotationGatewayRoute]); ok {
			r = p
		}
		if r != contract.DefaultRoute(s.engine, s.tlsOn) {
			w.Route = &r
		}
	}
	return w
}

// gateway runs the instance and its gateway before step s.step+1: the
// instance renders what it wants, the rollout replaces up to speed pods,
// and the instance publishes what every pod is confirmed to run.
func (s *tlsSim) gateway() {
	w := s.wanted()
	if !reflect.DeepEqual(w, s.target) {
		s.target = w
		s.history = append(s.history, fmt.Sprintf("  gateway rolls to %s", w))
	}
	moved := 0
	if s.speed > 0 {
		moved = s.d.intn(0, s.speed, "gateway progress")
	}
	for i := range s.pods {
		if moved == 0 {
			break
		}
		if !reflect.DeepEqual(s.pods[i], s.target) {
			s.pods[i] = s.target
			moved--
		}
	}
	all := true
	for _, p := range s.pods {
		all = all && reflect.DeepEqual(p, s.target)
	}
	var trust []string
	up := s.rolledUp
	if all {
		trust, up = s.target.Trust, s.target.upstream(s.engine)
	} else {
		for _, fp := range s.rolledTrust {
			if slices.Contains(w.Trust, fp) {
				trust = append(trust, fp)
			}
		}
	}
	if !slices.Equal(trust, s.rolledTrust) || !reflect.DeepEqual(up, s.rolledUp) {
		s.history = append(s.history, fmt.Sprintf("  instance publishes rolled trust %s upstream %s", trustText(trust), upstreamText(up)))
	}
	s.rolledTrust, s.rolledUp = slices.Clone(trust), up
	s.publish()
}

func upstreamText(up *v1alpha1.EngineUpstreamStatus) string {
	if up == nil {
		return "nil"
	}
	return fmt.Sprintf("%+v", *up)
}

// publish writes the instance's engine TLS and what it rolled.
func (s *tlsSim) publish() {
	var issuer *v1alpha1.CertManagerSpec
	if s.tlsOn {
		issuer = simIssuer.DeepCopy()
	}
	s.SetInstanceTLS(issuer, s.rolledTrust, s.rolledUp)
}

// Step runs cert-manager, the instance and the gateway, then one
// reconcile of the engine, checking the engine-TLS invariants on the
// states before and after the engine's writes.
func (s *tlsSim) Step() {
	s.t.Helper()
	s.certManager()
	s.startPods()
	s.gateway()
	s.checkTLS("before the engine's call")
	from, fromTLS := s.routed()
	s.sim.Step()
	s.count(from, fromTLS)
	s.history = append(s.history, fmt.Sprintf("  routing %s next %s; %s", s.svcText(engine.RoutingServiceKey), s.svcText(engine.NextServiceKey), podsText(s.pods)))
	s.checkTLS("after the engine's call")
}

// routed is the generation the routing Service selects and whether it
// serves TLS; -1 when there is none.
func (s *tlsSim) routed() (int, bool) {
	svc := s.objs[engine.RoutingServiceKey]
	if svc == nil {
		return -1, false
	}
	g := selectedGeneration(svc.content)
	if o := s.objs[stsKey(g)]; o != nil {
		tls, _ := stsTLS(o)
		return g, tls
	}
	return g, false
}

// count notes what the step just run exercised.
func (s *tlsSim) count(from int, fromTLS bool) {
	s.stats.steps++
	s.stats.restarts = s.restarts
	if to, toTLS := s.routed(); from >= 0 && to != from {
		if toTLS != fromTLS {
			s.stats.protocolSwitches++
		} else if toTLS {
			s.stats.tlsSwitches++
		}
	}
	if s.objs[engine.NextServiceKey] != nil {
		s.stats.nextSteps++
	}
	for _, c := range s.lastRsp.GetConditions() {
		if c.GetType() == "EngineReady" && c.GetReason() == engine.ReasonWaitingForGateway {
			s.stats.gatewayHolds++
		}
	}
	for _, r := range s.lastRsp.GetResults() {
		if strings.Contains(r.GetMessage(), "cert-manager issued its certificate again") {
			s.stats.renewalRolls++
		}
	}
}

func (s *tlsSim) svcText(key resource.Name) string {
	o := s.objs[key]
	if o == nil {
		return "-"
	}
	ann, _, _ := unstructured.NestedStringMap(o.content, "metadata", "annotations")
	r := ann[contract.AnnotationGatewayRoute]
	if r == "" {
		r = "none"
	}
	return fmt.Sprintf("g%d(%s)", selectedGeneration(o.content), r)
}

// service is the composed Service named name.
func (s *tlsSim) service(name string) *simObj {
	for _, o := range s.objs {
		if o.content["kind"] != "Service" {
			continue
		}
		if md, _ := o.content["metadata"].(map[string]any); md["name"] == name {
			return o
		}
	}
	return nil
}

// reach says why a gateway pod holding c cannot reach the engine by its
// route ("" when it can): the Service must exist and select a generation
// that exists, serves the route's protocol and, over TLS, serves a
// certificate of a CA the pod trusts.
func (s *tlsSim) reach(c gwConfig) string {
	r := c.route(s.engine)
	svc := s.service(r.Service)
	if svc == nil {
		return fmt.Sprintf("route %s: Service %s does not exist", r, r.Service)
	}
	g := selectedGeneration(svc.content)
	o := s.objs[stsKey(g)]
	if o == nil {
		return fmt.Sprintf("route %s: Service %s selects generation %d, which has no StatefulSet", r, r.Service, g)
	}
	tls, replicas := stsTLS(o)
	if tls != r.TLS {
		return fmt.Sprintf("route %s: Service %s selects generation %d, which serves tls=%v", r, r.Service, g, tls)
	}
	if tls && replicas > 0 {
		if why := s.trusts(c, g); why != "" {
			return fmt.Sprintf("route %s: Service %s selects generation %d: %s", r, r.Service, g, why)
		}
	}
	return ""
}

// trusts says why a pod holding c does not trust what TLS generation g
// serves ("" when it does).
func (s *tlsSim) trusts(c gwConfig, g int) string {
	iss, ok := s.served[g]
	if !ok {
		return fmt.Sprintf("generation %d serves no certificate yet", g)
	}
	if !slices.Contains(c.Trust, iss.ca) {
		return fmt.Sprintf("generation %d serves a certificate of %s, which the pod does not trust (%v)", g, caName(iss.ca), c)
	}
	return ""
}

// checkTLS asserts the engine-TLS invariants.
func (s *tlsSim) checkTLS(when string) {
	s.t.Helper()
	// The routing Service never selects a TLS generation whose CA a
	// gateway pod does not trust.
	if svc := s.objs[engine.RoutingServiceKey]; svc != nil {
		g := selectedGeneration(svc.content)
		if o := s.objs[stsKey(g)]; o != nil {
			if tls, replicas := stsTLS(o); tls && replicas > 0 {
				for i, p := range s.pods {
					if why := s.trusts(p, g); why != "" {
						s.fail("step %d, %s: the routing Service selects generation %d, and gateway pod %d: %s", s.step, when, g, i, why)
					}
				}
			}
		}
	}
	// A pod that reaches a live TLS generation over TLS trusts its CA;
	// once every pod has reached the engine, every pod always does.
	all := true
	for i, p := range s.pods {
		why := s.reach(p)
		all = all && why == ""
		if why == "" {
			continue
		}
		if s.reachable {
			s.fail("step %d, %s: gateway pod %d cannot reach the engine: %s", s.step, when, i, why)
		}
		if r := p.route(s.engine); r.TLS {
			if svc := s.service(r.Service); svc != nil {
				g := selectedGeneration(svc.content)
				if o := s.objs[stsKey(g)]; o != nil {
					if tls, replicas := stsTLS(o); tls && replicas > 0 {
						if _, issued := s.served[g]; issued {
							if why := s.trusts(p, g); why != "" {
								s.fail("step %d, %s: gateway pod %d reaches live generation %d over TLS by %s: %s", s.step, when, i, g, r.Service, why)
							}
						}
					}
				}
			}
		}
	}
	// Before the first switch (no active generation) nothing is served
	// yet: generations may be abandoned under the routing Service.
	if all && !s.reachable && s.Status().ActiveGeneration >= 0 {
		s.reachable = true
		s.history = append(s.history, "  every gateway pod reaches the engine")
	}
}

// settled reports whether the engine and its gateway rest: the engine has
// converged (sim.Converged) on a generation of the instance's protocol
// whose pods serve its certificate's current issue, the next Service is
// gone, every gateway pod holds the configuration the instance wants and
// reaches the engine by its routing Service, and the instance publishes
// that configuration.
func (s *tlsSim) settled() (bool, string) {
	if ok, why := s.Converged(); !ok {
		return false, why
	}
	st := s.Status()
	o := s.objs[stsKey(st.ActiveGeneration)]
	if tls, _ := stsTLS(o); tls != s.tlsOn {
		return false, fmt.Sprintf("active generation %d serves tls=%v, the instance asks for tls=%v", st.ActiveGeneration, tls, s.tlsOn)
	}
	if tls, replicas := stsTLS(o); tls && replicas > 0 {
		c := s.certs[certKey(st.ActiveGeneration)]
		if c == nil || s.served[st.ActiveGeneration] != c.current {
			return false, fmt.Sprintf("active generation %d's pods serve %+v, its certificate's current issue is %+v", st.ActiveGeneration, s.served[st.ActiveGeneration], c)
		}
	}
	if s.objs[engine.NextServiceKey] != nil {
		return false, "the next Service still exists"
	}
	for i, p := range s.pods {
		if !reflect.DeepEqual(p, s.target) || !reflect.DeepEqual(p, s.wanted()) {
			return false, fmt.Sprintf("gateway pod %d holds %s, the instance wants %s", i, p, s.wanted())
		}
		if r := p.route(s.engine); r != contract.DefaultRoute(s.engine, s.tlsOn) {
			return false, fmt.Sprintf("gateway pod %d reaches the engine by %s", i, r)
		}
		if why := s.reach(p); why != "" {
			return false, fmt.Sprintf("gateway pod %d: %s", i, why)
		}
	}
	if !slices.Equal(s.rolledTrust, s.target.Trust) || !reflect.DeepEqual(s.rolledUp, s.target.upstream(s.engine)) {
		return false, "the instance does not publish what its gateway runs"
	}
	if c := s.conditions["EngineReady"]; s.effectiveReplicas() > 0 && (c == nil || c.GetStatus().String() != "STATUS_CONDITION_TRUE") {
		return false, fmt.Sprintf("EngineReady is %v", c)
	}
	return true, ""
}

// settle steps a quiet simulation until it has settled and a further
// step changes nothing, within bound steps.
func (s *tlsSim) settle(bound int) {
	s.t.Helper()
	why := ""
	for range bound {
		before := s.Status()
		s.Step()
		ok, w := s.settled()
		if ok && !reflect.DeepEqual(before, s.Status()) {
			ok, w = false, "status still changing"
		}
		if ok {
			return
		}
		why = w
	}
	s.fail("not settled within %d quiet steps: %s", bound, why)
}

// podsText is the gateway pods' configurations, for messages.
func podsText(pods []gwConfig) string {
	var b strings.Builder
	for i, p := range pods {
		fmt.Fprintf(&b, "pod %d %s; ", i, p)
	}
	return b.String()
}
