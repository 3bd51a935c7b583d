package engine

import (
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

// recordServingTLS sets the status's engine-TLS records after this call:
// at rest, the active generation's TLS hash and the fingerprint of the
// certificate it was last issued; during a rollout, the previous ones.
func (m *machine) recordServingTLS() {
	prev := m.in.Status
	m.next.ObservedEngineTLSHash = prev.ObservedEngineTLSHash
	m.next.ObservedEngineServingCertFP = prev.ObservedEngineServingCertFP
	m.next.ObservedEngineServingCertGen = prev.ObservedEngineServingCertGen
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
	if c := m.in.ServingCert; c.Gen == n && c.CertFingerprint != "" {
		m.next.ObservedEngineServingCertFP = c.CertFingerprint
		m.next.ObservedEngineServingCertGen = ptrTo(n)
	}
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
	if !isAuthHash(h) {
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
