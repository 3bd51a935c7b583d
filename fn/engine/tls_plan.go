package engine

import (
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/certmanager"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// emitCertificates adds the Certificate of every generation the call
// returns that serves TLS, rendered from its recorded StatefulSet, else
// kept as observed: a generation's certificate lives exactly as long as
// its objects.
func (m *machine) emitCertificates(p *Plan) {
	for gen, mode := range m.emit {
		name := resourceName(gen, suffixCertificate)
		obs := m.in.Observed[name]
		if mode == emitExisting && obs == nil {
			continue
		}
		var obsMap map[string]any
		if obs != nil {
			obsMap = obs.UnstructuredContent()
		}
		if rec, ok := m.in.Renderings[gen]; ok && rec.usable() {
			if crt, has, err := certificateOfStatefulSet(rec.Objects.StatefulSet, m.in.Engine, m.in.Namespace, gen); err == nil && has {
				p.Resources[name] = DesiredObject{Object: crt, Ready: certmanager.Ready(obsMap)}
				continue
			}
		}
		if obs != nil {
			p.Resources[name] = DesiredObject{Object: composite.Unchanged(obsMap), Ready: true}
		}
	}
	// A generation a Service still selects keeps its certificate, and so
	// its CA in the gateway's trust, while its pods may serve: a first
	// generation abandoned before anything replaced it, for one.
	for _, key := range []resource.Name{RoutingServiceKey, NextServiceKey} {
		gen := routedGeneration(m.in.Observed[key])
		name := resourceName(gen, suffixCertificate)
		if _, done := p.Resources[name]; gen < 0 || done || m.in.Observed[resourceName(gen, suffixStatefulSet)] == nil {
			continue
		}
		if obs := m.in.Observed[name]; obs != nil {
			p.Resources[name] = DesiredObject{Object: composite.Unchanged(obs.UnstructuredContent()), Ready: true}
		}
	}
}

// gatewayRoute is the route the routing Service publishes, routed at
// gen: "" for the routing Service over plain HTTP, which is what the
// instance reads when none is published, so an engine that never serves
// TLS never publishes one.
func (m *machine) gatewayRoute(gen int) (contract.GatewayRoute, string) {
	r := m.publishedRoute(gen)
	if r == contract.DefaultRoute(m.in.Engine, false) {
		return r, ""
	}
	return r, r.String()
}

// emitNextService adds the next Service while the engine asks the gateway
// to use it or a gateway pod may still.
func (m *machine) emitNextService(p *Plan, published contract.GatewayRoute) {
	gen, ok := m.nextServiceGen(published)
	if !ok || gen < 0 {
		return
	}
	p.Resources[NextServiceKey] = DesiredObject{Object: renderNextService(m.in.Engine, m.in.Namespace, gen), Ready: true}
}

// recordServingTLS sets the status's engine-TLS records after this call.
// The certificate's fingerprint is the first one seen for the current
// generation, which is what its pods started with: a later one is a
// renewal they have not read (renewed). The TLS hash is, at rest, the
// active generation's; during a rollout, the previous one.
func (m *machine) recordServingTLS() {
	prev := m.in.Status
	m.next.ObservedEngineTLSHash = prev.ObservedEngineTLSHash
	m.next.ObservedEngineServingCertFP = prev.ObservedEngineServingCertFP
	m.next.ObservedEngineServingCertGen = prev.ObservedEngineServingCertGen
	if c, g := m.in.ServingCert, prev.ObservedEngineServingCertGen; c.CertFingerprint != "" && c.Gen == m.next.CurrentGeneration && (g == nil || *g != c.Gen) {
		m.next.ObservedEngineServingCertFP = c.CertFingerprint
		m.next.ObservedEngineServingCertGen = ptrTo(c.Gen)
	}
	switch m.next.Phase {
	case v1alpha1.EnginePhaseStable, v1alpha1.EnginePhaseStopped:
	default:
		return
	}
	n := m.next.ActiveGeneration
	if !m.generationTLS(n) {
		m.next.ObservedEngineTLSHash = ""
		m.next.ObservedEngineServingCertFP = ""
		m.next.ObservedEngineServingCertGen = nil
		return
	}
	m.next.ObservedEngineTLSHash = m.recordedTLSHash(n)
}

// recordedTLSHash is generation gen's StatefulSet's engine-tls-hash.
func (m *machine) recordedTLSHash(gen int) string {
	rec, ok := m.recorded[gen]
	if !ok {
		rec, ok = m.in.Renderings[gen]
	}
	if !ok || !rec.usable() {
		return ""
	}
	md, _ := rec.Objects.StatefulSet["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	h, _ := ann[AnnotationEngineTLSHash].(string)
	if !isHash(h) {
		return ""
	}
	return h
}

// renewed reports whether cert-manager issued generation n's certificate
// again since n went into service: n's pods read it when they start, so
// a new generation serves the new one.
func (m *machine) renewed(n int) bool {
	c, st := m.in.ServingCert, m.in.Status
	return m.generationTLS(n) && c.Gen == n && c.CertFingerprint != "" &&
		st.ObservedEngineServingCertGen != nil && *st.ObservedEngineServingCertGen == n &&
		st.ObservedEngineServingCertFP != "" && st.ObservedEngineServingCertFP != c.CertFingerprint
}
