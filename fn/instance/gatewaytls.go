package instance

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance/envoyconfig"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// TypeGatewayTLSReady says whether the gateway's client listener serves
// the TLS the spec asks for. It is part of the instance's readiness.
const TypeGatewayTLSReady = "GatewayTLSReady"

// Reasons of GatewayTLSReady, the original's.
const (
	ReasonTLSDisabled          = "Disabled"
	ReasonTLSSpecInvalid       = "TLSSpecInvalid"
	ReasonCertificatePending   = "CertificatePending"
	ReasonStagingFailClosed    = "StagingFailClosed"
	ReasonSecureRolloutPending = "SecureRolloutPending"
)

// RNGatewayTLS is the gateway certificate's composition resource name.
const RNGatewayTLS resource.Name = "gateway-tls"

// The gateway's Certificate, as the original's: 90 days renewed 30 days
// early, a new key at each renewal, server auth only.
const (
	gatewayTLSDuration    = 90 * 24 * time.Hour
	gatewayTLSRenewBefore = 30 * 24 * time.Hour
	componentGatewayTLS   = "gateway-tls"
)

func (n names) gatewayTLS() string { return n.instance + "-gateway-tls" }

// posture is what the gateway's client listener serves in this call, and
// what the status records of it.
type posture struct {
	listener envoyconfig.Listener
	// cert, clientCA and crl name the Secrets mounted for the listener.
	cert, clientCA, crl string
	// staging rolls the Deployment with every old pod stopped first: the
	// listener is closed while a tightening stages, and no pod of the
	// weaker posture may outlive the closed one's rollout.
	staging bool
	// status is status.gatewayTLS for this call.
	status *v1alpha1.GatewayTLSStatus
	// pending is a condition decided before rendering; "" leaves it to
	// the rollout (Ready once every pod runs the configuration).
	pending     string
	pendingText string
}

// rank orders postures by what they demand of a client: plain, TLS,
// mutual TLS.
func rank(st *v1alpha1.GatewayTLSStatus) int {
	switch {
	case st == nil:
		return 0
	case st.Mode == v1alpha1.GatewayTLSModeMutualTLS:
		return 2
	default:
		return 1
	}
}

// tighter reports whether a client that a gateway serving s accepts may be
// refused by one serving want.
func tighter(want, s *v1alpha1.GatewayTLSStatus) bool {
	if rank(want) != rank(s) {
		return rank(want) > rank(s)
	}
	return rank(want) == 2 && want.ClientCASecretName != s.ClientCASecretName
}

// mountedPosture is the posture the observed gateway Deployment d's pod
// template mounts: mutual TLS with the client CA Secret it projects first,
// TLS, or nil for neither (plain, or the closed listener of a staging);
// false when there is no Deployment, which is no evidence of a posture.
// A template edited by someone else can only make it read tighter or
// looser than the status, and either way a tightening is staged (fail
// closed), unless the template is exactly the one the tighter posture
// renders (rendersAlready), which only the end of a staging writes.
func mountedPosture(d *composed.Unstructured) (*v1alpha1.GatewayTLSStatus, bool) {
	if d == nil {
		return nil, false
	}
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	var tls, mutual bool
	var ca string
	for _, v := range vols {
		vol, _ := v.(map[string]any)
		switch vol["name"] {
		case podtemplate.VolumeGatewayTLS:
			tls = true
		case podtemplate.VolumeClientCA:
			mutual = true
			srcs, _, _ := unstructured.NestedSlice(vol, "projected", "sources")
			if len(srcs) > 0 {
				src, _ := srcs[0].(map[string]any)
				ca, _, _ = unstructured.NestedString(src, "secret", "name")
			}
		}
	}
	switch {
	case mutual:
		return &v1alpha1.GatewayTLSStatus{Mode: v1alpha1.GatewayTLSModeMutualTLS, ClientCASecretName: ca}, true
	case tls:
		return &v1alpha1.GatewayTLSStatus{Mode: v1alpha1.GatewayTLSModeTLS}, true
	}
	return nil, true
}

// gatewayPosture decides the client listener's posture from the spec and
// what status says the gateway serves, and composes the gateway's
// Certificate. Loosening and changes of certificate roll as any change
// does. A tightening (plain to TLS, TLS to mutual TLS, another client CA)
// is fail-closed, as the original's: the status forgets the served
// posture, the listener is rendered closed and rolled with the old pods
// stopped first, and only once no pod serves anything but the closed
// listener is the new posture recorded and rolled. No pod ever serves the
// weaker posture with the new configuration.
func (c *computation) gatewayPosture(now time.Time) posture {
	prev := c.in.XR.Status.GatewayTLS
	var spec *v1alpha1.TLSListenerSpec
	if t := c.in.XR.Spec.TLS; t != nil {
		spec = t.Gateway
	}
	if spec == nil || !spec.Enabled {
		return posture{pending: ReasonTLSDisabled, pendingText: tlsDisabledText}
	}
	if msg := c.validateGatewayTLS(spec); msg != "" {
		// The listener keeps what it serves; nothing the spec asks for is
		// rendered.
		p := servedPosture(prev)
		c.freeze(RNGatewayTLS)
		p.pending, p.pendingText = ReasonTLSSpecInvalid, msg
		return p
	}
	want := &v1alpha1.GatewayTLSStatus{Mode: v1alpha1.GatewayTLSModeTLS}
	if spec.SecretRef != nil {
		want.SecretName = spec.SecretRef.Name
	} else {
		want.SecretName = c.n.gatewayTLS()
		if err := c.add(RNGatewayTLS, c.gatewayCertificate(spec)); err != nil {
			panic("instance: cannot render the gateway Certificate: " + err.Error())
		}
	}
	if spec.ClientCASecretRef != nil {
		want.Mode = v1alpha1.GatewayTLSModeMutualTLS
		want.ClientCASecretName = spec.ClientCASecretRef.Name
		if spec.CRLSecretRef != nil {
			want.CRLSecretName = spec.CRLSecretRef.Name
		}
	}
	issued := spec.SecretRef != nil || certificateReady(c.in.Observed[RNGatewayTLS])
	p := posture{
		listener: envoyconfig.Listener{TLS: true, ClientCA: want.ClientCASecretName != "", CRL: want.CRLSecretName != ""},
		cert:     want.SecretName, clientCA: want.ClientCASecretName, crl: want.CRLSecretName,
		status: want,
	}
	// A loosening rolls the Deployment and records the looser posture in
	// the same call; were that status write lost, the status would still
	// name the tighter one while pods serve the looser: so a tightening is
	// judged against what the observed Deployment mounts as well. The call
	// that ends a staging records and renders the tighter posture at once
	// too; were that status write lost, the status would name no posture
	// while the template already is this one. Only a completed staging (or
	// no tightening at all) renders it, so it is kept, not staged again.
	mounted, ok := mountedPosture(c.in.Observed[RNGateway])
	if (tighter(want, prev) || ok && tighter(want, mounted)) && !c.rendersAlready(p) {
		closed := posture{listener: envoyconfig.Listener{Closed: true}, staging: true}
		hash := c.postureHash(closed)
		switch {
		case hash == "" || (c.in.Observed[RNGateway] != nil && !servesOnly(c.in.Observed[RNGateway], hash)):
			// No gateway yet is nothing to stage.
			closed.pending = ReasonStagingFailClosed
			closed.pendingText = "the gateway's client port is closed while every pod of the weaker posture stops; " + describePosture(want) + " follows"
			return closed
		case !issued:
			closed.pending = ReasonCertificatePending
			closed.pendingText = fmt.Sprintf("the gateway's client port stays closed until cert-manager issues Certificate %s", c.n.gatewayTLS())
			return closed
		}
		// Every pod runs the closed listener: the new posture is
		// recorded and rolled.
		prev = nil
	}
	if !issued && prev != nil {
		// The certificate the gateway serves stays mounted until its
		// replacement is issued.
		p.cert, want.SecretName = prev.SecretName, prev.SecretName
		p.pending = ReasonCertificatePending
		p.pendingText = fmt.Sprintf("waiting for cert-manager to issue Certificate %s; the gateway serves Secret %s meanwhile", c.n.gatewayTLS(), prev.SecretName)
	}
	want.CreatedAt = &metav1.Time{Time: now}
	if prev != nil && prev.CreatedAt != nil && prev.Mode == want.Mode && prev.SecretName == want.SecretName &&
		prev.ClientCASecretName == want.ClientCASecretName && prev.CRLSecretName == want.CRLSecretName {
		want.CreatedAt = prev.CreatedAt
	}
	return p
}

// unrenderedPosture is the posture of a call that renders no gateway:
// disabled TLS is still Disabled, anything else waits for the gateway.
func (c *computation) unrenderedPosture() posture {
	if t := c.in.XR.Spec.TLS; t == nil || t.Gateway == nil || !t.Gateway.Enabled {
		return posture{pending: ReasonTLSDisabled, pendingText: tlsDisabledText}
	}
	return servedPosture(c.in.XR.Status.GatewayTLS)
}

const tlsDisabledText = "TLS on the gateway is disabled: it serves plain HTTP"

// servedPosture renders what status says the gateway serves.
func servedPosture(st *v1alpha1.GatewayTLSStatus) posture {
	if st == nil {
		return posture{}
	}
	return posture{
		listener: envoyconfig.Listener{TLS: true, ClientCA: st.ClientCASecretName != "", CRL: st.CRLSecretName != ""},
		cert:     st.SecretName, clientCA: st.ClientCASecretName, crl: st.CRLSecretName,
		status: st,
	}
}

func describePosture(st *v1alpha1.GatewayTLSStatus) string {
	if st.Mode == v1alpha1.GatewayTLSModeMutualTLS {
		return fmt.Sprintf("mutual TLS (certificate from Secret %s, client certificates verified against Secret %s)", st.SecretName, st.ClientCASecretName)
	}
	return fmt.Sprintf("TLS (certificate from Secret %s)", st.SecretName)
}

// gatewayTLSCondition says GatewayTLSReady once the gateway is rendered
// with hash ("" when it is not).
func (c *computation) gatewayTLSCondition(p posture, hash string) Condition {
	cond := Condition{Type: TypeGatewayTLSReady, Status: metav1.ConditionFalse, Reason: p.pending, Message: p.pendingText}
	switch {
	case p.pending == ReasonTLSDisabled:
		cond.Status = metav1.ConditionTrue
	case p.pending != "":
	case hash == "":
		cond.Reason, cond.Message = ReasonSecureRolloutPending, "the gateway is not rendered: see GatewayReady"
	case servesOnly(c.in.Observed[RNGateway], hash):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonReady, "the gateway serves "+describePosture(p.status)
	default:
		secrets := []string{p.cert + " (tls.crt, tls.key)"}
		if p.clientCA != "" {
			secrets = append(secrets, p.clientCA+" ("+envoyconfig.KeyCA+")")
		}
		if p.crl != "" {
			secrets = append(secrets, p.crl+" ("+envoyconfig.KeyCRL+")")
		}
		cond.Reason = ReasonSecureRolloutPending
		cond.Message = fmt.Sprintf("waiting for every gateway pod to serve %s; a pod starts only once Secret(s) %s exist with those keys",
			describePosture(p.status), strings.Join(secrets, ", "))
	}
	return cond
}

// rendersAlready: the observed gateway Deployment's template is the one
// posture p renders (its config hash), whatever its pods run yet.
func (c *computation) rendersAlready(p posture) bool {
	d := c.in.Observed[RNGateway]
	if d == nil {
		return false
	}
	hash := c.postureHash(p)
	return hash != "" && templateHash(d) == hash
}

// templateHash is the config hash the Deployment's pod template carries.
func templateHash(d *composed.Unstructured) string {
	h, _, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", AnnotationConfigHash)
	return h
}

// servesOnly: every pod of the Deployment runs the template whose config
// hash is hash, and no other pod is left.
func servesOnly(d *composed.Unstructured, hash string) bool {
	if d == nil {
		return false
	}
	want := specReplicas(d)
	return templateHash(d) == hash && deploymentRolledOut(d) && integer(d, "status.replicas") == want && integer(d, "status.updatedReplicas") == want
}

// validateGatewayTLS checks what admission cannot: that no Secret named is
// one this instance mints. "" when valid.
func (c *computation) validateGatewayTLS(spec *v1alpha1.TLSListenerSpec) string {
	minted := map[string]bool{
		c.n.gatewayTLS(): spec.SecretRef != nil, c.n.instance + "-engine-tls": true, c.n.instance + "-engine-ca-bundle": true,
	}
	var msgs []string
	check := func(field string, ref *v1alpha1.SecretReference) {
		if ref != nil && minted[ref.Name] {
			msgs = append(msgs, fmt.Sprintf("spec.tls.gateway.%s.name: %q is a Secret this instance mints; name a Secret of yours", field, ref.Name))
		}
	}
	check("secretRef", spec.SecretRef)
	check("clientCASecretRef", spec.ClientCASecretRef)
	check("crlSecretRef", spec.CRLSecretRef)
	if ref := spec.ClientCASecretRef; ref != nil && ref.Name == c.n.gatewayTLS() {
		msgs = append(msgs, fmt.Sprintf("spec.tls.gateway.clientCASecretRef.name: %q holds the gateway's own certificate and key", ref.Name))
	}
	return strings.Join(msgs, "; ")
}

// gatewayCertificate is the gateway's cert-manager Certificate, as the
// original's: the gateway Service's names and spec.tls.gateway.dnsNames,
// server auth, PKCS#8, a new key at each renewal.
func (c *computation) gatewayCertificate(spec *v1alpha1.TLSListenerSpec) *unstructured.Unstructured {
	cm := spec.CertManager
	n := c.n
	svc := n.gateway()
	dns := make([]any, 0, 4+len(spec.DNSNames))
	dns = append(dns, svc, svc+"."+n.namespace, svc+"."+n.namespace+".svc", n.gatewayEndpoint())
	for _, d := range spec.DNSNames {
		dns = append(dns, d)
	}
	pk := map[string]any{"rotationPolicy": "Always", "encoding": "PKCS8"}
	if cm.Algorithm != "" {
		pk["algorithm"] = cm.Algorithm
	}
	if cm.Size != 0 {
		pk["size"] = int64(cm.Size)
	}
	return c.certificate(n.gatewayTLS(), componentGatewayTLS, *cm, gatewayTLSDuration, gatewayTLSRenewBefore, map[string]any{
		"dnsNames":   dns,
		"usages":     []any{"server auth"},
		"privateKey": pk,
	})
}
