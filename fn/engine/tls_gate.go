package engine

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/certmanager"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// A generation that serves TLS has a cert-manager Certificate, composed
// beside its objects (g<N>-certificate) and rendered from its recorded
// StatefulSet. The engine reads only public facts of what cert-manager
// issued for it: the CertificateRequest of the Certificate's current
// revision carries the issued certificate and its CA. The private key
// stays in the Secret cert-manager writes, which only the pods mount.

// suffixCertificate ends a generation's Certificate's
// composition-resource-name. It is not one of generationSuffixes: the
// Certificate is not part of the recorded rendering, and a generation's
// existence is told by those.
const suffixCertificate = "certificate"

// RequirementServingCert is the CertificateRequest of the current
// generation's Certificate's current revision.
const RequirementServingCert = "engine-tls-request"

// CertIssue is what cert-manager issued for one generation: public data.
type CertIssue struct {
	// Gen is the generation; -1 when nothing was read.
	Gen int
	// Resolved is false until Crossplane has fetched the request.
	Resolved bool
	// CAFingerprint is the fingerprint of the CA it was issued under
	// (certmanager.CA); "" until issued.
	CAFingerprint string
	// CertFingerprint tells one issue from the next (a renewal); "" until
	// issued.
	CertFingerprint string
}

// servingRequestName is the CertificateRequest to read for generation
// gen: its observed Certificate's current revision; "" when none.
func servingRequestName(in Inputs, gen int) string {
	obs := in.Observed[resourceName(gen, suffixCertificate)]
	if obs == nil {
		return ""
	}
	return certmanager.RequestName(obs.UnstructuredContent())
}

// readServingCert reads what cert-manager issued for the current
// generation.
func readServingCert(c composite.Call, in Inputs) (CertIssue, error) {
	gen := in.Status.CurrentGeneration
	out := CertIssue{Gen: -1}
	name := servingRequestName(in, gen)
	if name == "" {
		return out, nil
	}
	cr, resolved, err := composite.RequiredNamed(c.Req, RequirementServingCert, "CertificateRequest "+name, name)
	if err != nil {
		return out, err
	}
	out.Gen, out.Resolved = gen, resolved
	if cr == nil {
		return out, nil
	}
	if _, fp, ok := certmanager.CA(cr.Object); ok {
		out.CAFingerprint = fp
	}
	out.CertFingerprint = certmanager.CertificateFingerprint(cr.Object)
	return out, nil
}

// servingCertRequirement asks for the request readServingCert reads.
func servingCertRequirement(in Inputs, r map[string]Requirement) {
	if name := servingRequestName(in, in.Status.CurrentGeneration); name != "" {
		r[RequirementServingCert] = Requirement{APIVersion: "cert-manager.io/v1", Kind: "CertificateRequest", Name: name, Namespace: in.Namespace}
	}
}

// generationTLS reports whether generation gen serves TLS: its recorded
// StatefulSet, else its observed one, says so.
func (m *machine) generationTLS(gen int) bool {
	if rec, ok := m.recorded[gen]; ok {
		return isTLSStatefulSet(rec.Objects.StatefulSet)
	}
	if rec, ok := m.in.Renderings[gen]; ok && rec.usable() {
		return isTLSStatefulSet(rec.Objects.StatefulSet)
	}
	if obs := m.in.Observed[resourceName(gen, suffixStatefulSet)]; obs != nil {
		// Not the engine's own rendering: what its pods run tells, the
		// generation's certificate mounted (podtemplate reserves the
		// volume's name), not an annotation anyone may write.
		return mountsCertificate(obs, engineTLSName(m.in.Engine, gen))
	}
	return false
}

// mountsCertificate reports whether an observed StatefulSet's pods mount
// the Secret secret as the engine TLS volume.
func mountsCertificate(sts *ObservedObject, secret string) bool {
	vols, _, _ := unstructured.NestedSlice(sts.UnstructuredContent(), "spec", "template", "spec", "volumes")
	for _, v := range vols {
		vol, _ := v.(map[string]any)
		if vol["name"] != podtemplate.VolumeEngineTLS {
			continue
		}
		src, _ := vol["secret"].(map[string]any)
		return src != nil && src["secretName"] == secret
	}
	return false
}

// rolledRoute is how every gateway pod is confirmed to reach this engine.
// An instance that confirms nothing yet reaches engines by their routing
// Services over plain HTTP, as every gateway did before engine TLS.
func (m *machine) rolledRoute() contract.GatewayRoute {
	up := m.in.Instance.Status.RolledEngineUpstream
	if up == nil {
		return contract.DefaultRoute(m.in.Engine, false)
	}
	for _, r := range up.Routes {
		if r.Engine == m.in.Engine {
			return contract.GatewayRoute{Service: r.Service, TLS: r.TLS}
		}
	}
	return contract.DefaultRoute(m.in.Engine, up.TLS)
}

// trusted reports whether every gateway pod trusts the CA generation gen
// was issued under; a plain generation needs no trust.
func (m *machine) trusted(gen int) bool {
	if !m.generationTLS(gen) {
		return true
	}
	c := m.in.ServingCert
	return c.Gen == gen && c.CAFingerprint != "" && slices.Contains(m.in.Instance.Status.RolledEngineTrustCAs, c.CAFingerprint)
}

// protocolSwitch reports whether switching from the active generation to
// n changes the protocol the engine serves: the gateway must then reach n
// by the next Service before the routing Service moves.
func (m *machine) protocolSwitch(n int) bool {
	a := m.in.Status.ActiveGeneration
	return a >= 0 && a != n && m.generationExists(a) && m.generationTLS(a) != m.generationTLS(n)
}

// cutoverHeld says why the routing Service may not move to generation n
// yet ("" when it may): the gateway must trust n's CA, and must have
// settled on reaching the engine by its routing Service (a previous
// switch's next Service still in use would be left selecting a drained
// generation).
func (m *machine) cutoverHeld(n int) string {
	if m.generationTLS(n) && !m.trusted(n) {
		c := m.in.ServingCert
		if c.Gen != n || c.CAFingerprint == "" {
			return fmt.Sprintf("waiting for cert-manager to issue generation %d's certificate (Certificate %s)", n, engineTLSName(m.in.Engine, n))
		}
		return fmt.Sprintf("waiting for every gateway pod to trust the CA of generation %d's certificate (SHA-256 %s)", n, c.CAFingerprint)
	}
	a := m.in.Status.ActiveGeneration
	if a >= 0 && m.generationExists(a) {
		if want := contract.DefaultRoute(m.in.Engine, m.generationTLS(a)); m.rolledRoute() != want {
			return fmt.Sprintf("waiting for every gateway pod to reach the engine by Service %s again", want.Service)
		}
	}
	return ""
}

// nextHeld says why a protocol switch to n may not move the routing
// Service yet: every gateway pod must reach n by the next Service, in n's
// protocol, first.
func (m *machine) nextHeld(n int) string {
	want := contract.GatewayRoute{Service: contract.NextService(m.in.Engine), TLS: m.generationTLS(n)}
	if m.rolledRoute() == want && m.observedRoute() == want {
		return ""
	}
	proto := "plain HTTP"
	if want.TLS {
		proto = "TLS"
	}
	return fmt.Sprintf("switching generation %d to %s: waiting for every gateway pod to reach it by Service %s", n, proto, want.Service)
}

// switchingTo is the generation a protocol switch under way moves to,
// while the routing Service has not reached it.
func (m *machine) switchingTo() (int, bool) {
	n := m.next.CurrentGeneration
	return n, m.next.Phase == v1alpha1.EnginePhaseSwitching && m.next.ActiveGeneration != n && m.protocolSwitch(n)
}

// publishedRoute is how the engine asks the gateway to reach it after
// this call, routed at generation gen: by the next Service while a
// protocol switch has not moved the routing Service yet, once that
// Service is observed selecting the generation switched to (so no gateway
// pod is ever sent to a Service that does not exist); else by the routing
// Service in gen's protocol.
func (m *machine) publishedRoute(gen int) contract.GatewayRoute {
	if n, ok := m.switchingTo(); ok && routedGeneration(m.in.Observed[NextServiceKey]) == n {
		return contract.GatewayRoute{Service: contract.NextService(m.in.Engine), TLS: m.generationTLS(n)}
	}
	return contract.DefaultRoute(m.in.Engine, m.generationTLS(gen))
}

// observedRoute is the route the observed routing Service publishes;
// the routing Service over plain HTTP when it publishes none.
func (m *machine) observedRoute() contract.GatewayRoute {
	if obs := m.in.Observed[RoutingServiceKey]; obs != nil {
		v, _ := obs.str("metadata", "annotations", contract.AnnotationGatewayRoute)
		if r, ok := contract.ParseGatewayRoute(m.in.Engine, v); ok {
			return r
		}
	}
	return contract.DefaultRoute(m.in.Engine, false)
}

// nextCommitted reports whether the engine has asked the gateway to reach
// generation n by the next Service: the observed routing Service says so
// and the observed next Service selects n. Some gateway pod may then be
// reaching n that way, and nothing can tell when none is until the switch
// is complete: so it is completed, whatever the spec says now (a lost
// status write may have put the engine back in creating).
func (m *machine) nextCommitted(n int) bool {
	if m.in.Observed[RoutingServiceKey] == nil || routedGeneration(m.in.Observed[NextServiceKey]) != n {
		return false
	}
	return m.observedRoute().Service == contract.NextService(m.in.Engine) && m.generationExists(n)
}

// nextServiceGen is the generation the next Service selects, and whether
// it is composed at all: while a protocol switch is under way (before the
// engine asks the gateway to use it), or while a gateway pod may still use
// it (the confirmed route is it, or the gateway has not confirmed the
// route the engine asks for). It selects the generation switched to while
// the switch lasts; after, where it was observed while that generation
// exists, else the active one.
func (m *machine) nextServiceGen(published contract.GatewayRoute) (int, bool) {
	next := contract.NextService(m.in.Engine)
	rolled := m.rolledRoute()
	obs := m.in.Observed[NextServiceKey]
	if n, ok := m.switchingTo(); ok {
		return n, true
	}
	if published.Service != next && rolled.Service != next && (obs == nil || rolled == published) {
		return -1, false
	}
	if g := routedGeneration(obs); g >= 0 && m.generationExists(g) {
		return g, true
	}
	return m.next.ActiveGeneration, m.next.ActiveGeneration >= 0
}

// NextServiceKey is the next Service's composition-resource-name.
const NextServiceKey resource.Name = "next-service"
