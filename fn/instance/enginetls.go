package instance

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/certmanager"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance/envoyconfig"
	"github.com/firebolt-db/firebolt-crossplane/fn/trustset"
)

// Engine TLS, the instance's half. Engines serve TLS per generation, each
// with its own certificate; the instance decides how the gateway reaches
// them and which CAs it trusts, and publishes (status, and through it the
// ConfigMap engines read) what every gateway pod is confirmed to run:
// engines switch to a generation only once it is listed there.
//
// What it reads is public: the CertificateRequests cert-manager made for
// the engines' certificates and for the instance's anchor (found by the
// labels cert-manager copies from each Certificate; status.ca is the CA
// certificate), and the route each engine publishes on its routing
// Service. No Secret is read.

const (
	// TypeEngineTLSReady is the original's condition for engine TLS.
	TypeEngineTLSReady = "EngineTLSReady"
	// ReasonConverging says engines or gateway pods do not all serve the
	// protocol engine TLS asks for yet.
	ReasonConverging = "Converging"
	// ReasonDraining says engine TLS is disabled and an engine still
	// serves TLS.
	ReasonDraining = "Draining"
)

// Composition resource names: the anchor Certificate, and the prefix of
// the gateway's engine CA bundles (one per content, see bundleOf).
const (
	RNEngineTLSAnchor resource.Name = "engine-tls-anchor"
	RNEngineCABundle  resource.Name = "engine-ca-bundle"
)

const (
	componentEngineTLS      = "engine-tls"
	componentEngineCABundle = "engine-ca-bundle"
	// AnnotationEngineTrustCAs on the bundle lists the fingerprints it
	// holds, as the original's.
	AnnotationEngineTrustCAs = "firebolt.io/engine-trust-cas"

	reqEngineCAs = "engine-tls-requests"

	engineTLSDuration    = 90 * 24 * time.Hour
	engineTLSRenewBefore = 30 * 24 * time.Hour

	// maxListedEngines bounds the engines named in a message.
	maxListedEngines = 5
)

// EngineTLSInputs is what engine TLS reads of the request.
type EngineTLSInputs struct {
	// Routes are the routes the instance's engines publish, by engine
	// (contract.GatewayRoute); an engine publishing none, or one that
	// does not parse, is reached by its routing Service over plain HTTP.
	Routes map[string]contract.GatewayRoute
	// CAs are the CAs of the instance's engine and anchor
	// CertificateRequests, by request name; CAsResolved is false until
	// Crossplane has listed them.
	CAs         map[string]trustset.CA
	CAsResolved bool
}

// readEngineTLS reads the engines' routes (from the same list auth reads
// their hashes from) and the CAs of the instance's engine certificates.
func readEngineTLS(req *fnv1.RunFunctionRequest) (EngineTLSInputs, error) {
	out := EngineTLSInputs{Routes: map[string]contract.GatewayRoute{}, CAs: map[string]trustset.CA{}}
	svcs, _, err := composite.Required(req, reqEngines, "engine routing Services")
	if err != nil {
		return out, err
	}
	for _, s := range svcs {
		engine := s.Resource.GetLabels()[contract.LabelEngine]
		if r, ok := contract.ParseGatewayRoute(engine, s.Resource.GetAnnotations()[contract.AnnotationGatewayRoute]); ok && routable(engine) {
			out.Routes[engine] = r
		}
	}
	crs, resolved, err := composite.Required(req, reqEngineCAs, "engine CertificateRequests")
	if err != nil {
		return out, err
	}
	out.CAsResolved = resolved
	for _, cr := range crs {
		pemBytes, _, ok := certmanager.CA(cr.Resource.Object)
		if !ok {
			continue
		}
		if ca, err := trustset.NewCA(string(pemBytes)); err == nil {
			out.CAs[cr.Resource.GetName()] = ca
		}
	}
	return out, nil
}

// routable: engine can be a FireboltEngine's name, so both its Services'
// names are DNS labels. A routing Service labelled otherwise was not made
// by an engine of this product, and is neither routed nor waited for.
func routable(engine string) bool {
	return len(validation.IsDNS1123Label(contract.RoutingService(engine))) == 0 &&
		len(validation.IsDNS1123Label(contract.NextService(engine))) == 0
}

// engineTLS is one call's decision for engine TLS, before the gateway is
// rendered: the anchor, the upstream the gateway renders and the bundle
// it mounts.
type engineTLS struct {
	enabled bool
	// status is status.engineTLS after this call.
	status *v1alpha1.EngineTLSStatus
	// upstream is how the gateway is to reach engines.
	upstream envoyconfig.Upstream
	// bundle is the CA bundle's ca.crt and its fingerprints; mounted when
	// mount is true.
	bundle       string
	fingerprints []string
	mount        bool
	// bundleName and bundleRN name the bundle's ConfigMap and its
	// composition resource after its content (bundleOf).
	bundleName string
	bundleRN   resource.Name
	// crl is the CRL Secret mounted for upstream TLS, if any.
	crl string
	// frozen: what engines publish is not listed yet, so the gateway and
	// its bundle are kept as they are this call.
	frozen bool
	// pending is the condition decided before the gateway renders.
	pending     string
	pendingText string
}

// engineTLSActive says whether engine TLS concerns this instance at all:
// it is configured, or was, or the gateway still reaches an engine by
// another route than the plain default. Otherwise nothing is required or
// rendered, and an instance that never enables it costs nothing more.
func (c *computation) engineTLSActive() bool {
	st := c.in.XR.Status
	t := c.in.XR.Spec.TLS
	return t != nil && t.Engine != nil || st.EngineTLS != nil || st.RolledEngineUpstream != nil || len(st.RolledEngineTrustCAs) > 0
}

// anchorName is the anchor Certificate's (and Secret's) name.
func (n names) engineTLSAnchor() string { return n.instance + "-engine-tls" }

// engineCABundle is the bundle ConfigMap's name.
func (n names) engineCABundle() string { return n.instance + "-engine-ca-bundle" }

// decideEngineTLS decides engine TLS before the gateway renders.
func (c *computation) decideEngineTLS(now time.Time) engineTLS {
	if !c.engineTLSActive() {
		return engineTLS{}
	}
	c.requireEngines()
	c.plan.Requirements[reqEngineCAs] = &fnv1.ResourceSelector{
		ApiVersion: "cert-manager.io/v1", Kind: "CertificateRequest", Namespace: &c.n.namespace,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
			LabelInstance: c.n.instance, LabelComponent: componentEngineTLS,
		}}},
	}
	var spec *v1alpha1.TLSListenerSpec
	if t := c.in.XR.Spec.TLS; t != nil {
		spec = t.Engine
	}
	prev := c.in.XR.Status.EngineTLS
	d := engineTLS{enabled: spec != nil && spec.Enabled && spec.CertManager != nil}

	anchorCA := false
	if d.enabled {
		if msg := c.validateEngineTLS(spec); msg != "" {
			d.pending, d.pendingText = ReasonTLSSpecInvalid, msg
			d.status = prev
			d.frozen = true
			c.freeze(RNEngineTLSAnchor)
			return d
		}
		anchorCA = c.anchorIssued(spec.CertManager)
	}
	var issuer *v1alpha1.IssuerRef
	if d.enabled {
		issuer = &spec.CertManager.IssuerRef
	}
	d.status = c.engineTLSStatus(anchorCA, issuer, now)
	defaultTLS := d.enabled && d.status != nil && d.status.Reencrypting
	if d.enabled && !defaultTLS {
		d.pending = ReasonCertificatePending
		d.pendingText = fmt.Sprintf("waiting for cert-manager to issue Certificate %s from %s %s, with a CA (status.ca of its CertificateRequest): engines roll to TLS once it is; the issuer must be CA-backed",
			c.n.engineTLSAnchor(), spec.CertManager.IssuerRef.Kind, spec.CertManager.IssuerRef.Name)
	}

	if !c.in.Auth.EnginesResolved || !c.in.EngineTLS.CAsResolved {
		d.frozen = true
		return d
	}
	d.upstream = envoyconfig.Upstream{TLS: defaultTLS, Routes: c.engineRoutes(defaultTLS)}
	if d.enabled && spec.CRLSecretRef != nil && d.upstream.UsesTLS() {
		d.upstream.CRL = true
		d.crl = spec.CRLSecretRef.Name
	}
	d.mount = d.upstream.UsesTLS() || d.status != nil
	if d.mount {
		byReq := map[string][]trustset.CA{}
		for name, ca := range c.in.EngineTLS.CAs {
			byReq[name] = []trustset.CA{ca}
		}
		d.bundle, d.fingerprints = trustset.Bundle(byReq)
		d.bundleName, d.bundleRN = c.bundleOf(d.bundle)
		if d.bundle == "" && d.upstream.UsesTLS() {
			d.pending = ReasonCertificatePending
			d.pendingText = "no engine CA is known yet (no CertificateRequest of an engine or of the anchor carries status.ca): the gateway keeps its configuration"
			d.frozen = true
		}
	}
	return d
}

// anchorIssued composes the anchor Certificate and says whether
// cert-manager has issued it with a CA.
func (c *computation) anchorIssued(cm *v1alpha1.CertManagerSpec) bool {
	c.plan.Resources[RNEngineTLSAnchor] = Desired{Object: c.engineTLSAnchor(cm).Object, Ready: certificateReady(c.in.Observed[RNEngineTLSAnchor])}
	o := c.in.Observed[RNEngineTLSAnchor]
	if !certificateReady(o) {
		return false
	}
	// The observed Certificate may predate the apply of this spec: only
	// its issue by this issuer counts.
	name, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "name")
	kind, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "kind")
	if name != cm.IssuerRef.Name || kind != issuerKind(cm.IssuerRef) {
		return false
	}
	_, ok := c.in.EngineTLS.CAs[certmanager.RequestName(o.Object)]
	return ok
}

// engineTLSStatus is status.engineTLS after this call: recorded once the
// anchor is issued while enabled (issued); kept as it is while enabled
// and re-encrypting; else the previous one, no longer re-encrypting (so
// engines are not told to serve TLS under an issuer not proven since it
// was enabled again), kept while enabled, while an engine still serves
// TLS (and so the bundle stays), or while the engines are not listed yet.
func (c *computation) engineTLSStatus(issued bool, issuer *v1alpha1.IssuerRef, now time.Time) *v1alpha1.EngineTLSStatus {
	prev := c.in.XR.Status.EngineTLS
	enabled := issuer != nil
	same := func(r *v1alpha1.IssuerRef) bool {
		return r != nil && enabled && r.Name == issuer.Name && issuerKind(*r) == issuerKind(*issuer)
	}
	switch {
	case enabled && issued:
		st := &v1alpha1.EngineTLSStatus{SecretName: c.n.engineTLSAnchor(), CreatedAt: &metav1.Time{Time: now}, Reencrypting: true,
			IssuerRef: &v1alpha1.IssuerRef{Name: issuer.Name, Kind: issuerKind(*issuer)}}
		if prev != nil && prev.CreatedAt != nil {
			st.CreatedAt = prev.CreatedAt
		}
		return st
	case prev != nil && prev.Reencrypting && same(prev.IssuerRef):
		// The issuer proven when re-encryption started: a re-issue of the
		// anchor (a new duration, key size) is no reason to send engines
		// back to plain HTTP.
		return prev.DeepCopy()
	case prev != nil && (enabled || len(c.enginesOnTLS()) > 0 || !c.in.Auth.EnginesResolved):
		st := prev.DeepCopy()
		st.Reencrypting, st.IssuerRef = false, nil
		return st
	}
	return nil
}

// engineRoutes are the engines the gateway reaches otherwise than by
// default (their routing Service, over TLS iff defaultTLS), sorted: those
// publishing another route, and under a TLS default those publishing none,
// which serve plain HTTP.
func (c *computation) engineRoutes(defaultTLS bool) []envoyconfig.EngineRoute {
	var out []envoyconfig.EngineRoute
	published := c.in.EngineTLS.Routes
	for e := range c.in.Auth.Engines {
		if !routable(e) {
			continue
		}
		r, ok := published[e]
		if !ok {
			r = contract.DefaultRoute(e, false)
		}
		if r != contract.DefaultRoute(e, defaultTLS) {
			out = append(out, envoyconfig.EngineRoute{Engine: e, Service: r.Service, TLS: r.TLS})
		}
	}
	slices.SortFunc(out, func(a, b envoyconfig.EngineRoute) int { return strings.Compare(a.Engine, b.Engine) })
	return out
}

// enginesOnTLS are the engines that publish a TLS route, sorted.
func (c *computation) enginesOnTLS() []string {
	var out []string
	for e, r := range c.in.EngineTLS.Routes {
		if r.TLS {
			out = append(out, e)
		}
	}
	slices.Sort(out)
	return out
}

// engineTLSAnchor is the anchor Certificate, as the original's: one name
// no client uses, server auth, a new key at each issue. It proves the
// issuer signs with a CA before any engine rolls, and its CA is trusted
// beside the engines'.
func (c *computation) engineTLSAnchor(cm *v1alpha1.CertManagerSpec) *unstructured.Unstructured {
	pk := map[string]any{"rotationPolicy": "Always", "encoding": "PKCS8"}
	if cm.Algorithm != "" {
		pk["algorithm"] = cm.Algorithm
	}
	if cm.Size != 0 {
		pk["size"] = int64(cm.Size)
	}
	return c.certificate(c.n.engineTLSAnchor(), componentEngineTLS, *cm, engineTLSDuration, engineTLSRenewBefore, map[string]any{
		"dnsNames":   []any{c.n.engineTLSAnchor() + "-anchor." + c.n.namespace + ".svc." + contract.ClusterDomain},
		"usages":     []any{"server auth"},
		"privateKey": pk,
	})
}

// validateEngineTLS checks what admission cannot: that the CRL named is
// not a Secret this instance or its engines mint. "" when valid.
func (c *computation) validateEngineTLS(spec *v1alpha1.TLSListenerSpec) string {
	if ref := spec.CRLSecretRef; ref != nil {
		minted := []string{c.n.engineTLSAnchor(), c.n.gatewayTLS(), c.n.engineCABundle()}
		if slices.Contains(minted, ref.Name) {
			return fmt.Sprintf("spec.tls.engine.crlSecretRef.name: %q is a Secret this instance mints; name a Secret of yours", ref.Name)
		}
	}
	return ""
}

// bundleOf names the ConfigMap holding bundle, and its composition
// resource, after its content. A gateway pod then trusts exactly the CAs
// its template names: a ConfigMap updated in place could reach a new pod
// before or after its template, and the instance would publish as trusted
// by every pod a set some pod does not hold. The ConfigMap is immutable
// (so the kubelet reads it once), and a previous one is kept while a pod
// may still mount it (keepEngineCABundles).
func (c *computation) bundleOf(bundle string) (string, resource.Name) {
	h := partsHash(bundle)[:10]
	return c.n.engineCABundle() + "-" + h, RNEngineCABundle + "-" + resource.Name(h)
}

// renderEngineCABundle is the bundle the gateway mounts: the CAs engines
// and the anchor were issued under, public certificates only.
func renderEngineCABundle(n names, d engineTLS) *corev1.ConfigMap {
	m := objectMeta(n, d.bundleName, componentEngineCABundle)
	m.Annotations = map[string]string{AnnotationEngineTrustCAs: strings.Join(d.fingerprints, ",")}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: m,
		Immutable:  ptr.To(true),
		Data:       map[string]string{envoyconfig.EngineCAFile: d.bundle},
	}
}

// engineCABundles are the observed bundles' composition resource names.
func (c *computation) engineCABundles() []resource.Name {
	var out []resource.Name
	for rn := range c.in.Observed {
		if strings.HasPrefix(string(rn), string(RNEngineCABundle)+"-") {
			out = append(out, rn)
		}
	}
	return out
}

// keepEngineCABundles keeps every observed bundle the call does not
// compose until every gateway pod runs the template rendered with hash
// ("" when none is rendered): a pod of an earlier template still mounts
// one, and a pod cannot start without what it mounts.
func (c *computation) keepEngineCABundles(hash string) {
	if hash != "" && servesOnly(c.in.Observed[RNGateway], hash) {
		return
	}
	for _, rn := range c.engineCABundles() {
		if _, ok := c.plan.Resources[rn]; !ok {
			c.freeze(rn)
		}
	}
}

// rolledEngineTLS is what every gateway pod is confirmed to run, once the
// gateway is rendered with hash ("" when it is not): what it was rendered
// with when every pod runs it; else the previous upstream, and only CAs
// both the previous and the current configuration trust.
func (c *computation) rolledEngineTLS(d engineTLS, hash string) (trust []string, up *v1alpha1.EngineUpstreamStatus) {
	prev := c.in.XR.Status
	if hash == "" || d.frozen {
		return slices.Clone(prev.RolledEngineTrustCAs), prev.RolledEngineUpstream.DeepCopy()
	}
	var want []string
	if d.mount {
		want = d.fingerprints
	}
	if servesOnly(c.in.Observed[RNGateway], hash) && c.configObserved() {
		return slices.Clone(want), upstreamStatus(d.upstream)
	}
	for _, fp := range prev.RolledEngineTrustCAs {
		if slices.Contains(want, fp) {
			trust = append(trust, fp)
		}
	}
	return trust, prev.RolledEngineUpstream.DeepCopy()
}

// configObserved: the observed gateway ConfigMap holds the files this
// call renders. The ConfigMap is mounted by name and changed in place, so
// pods that run the template of this call's hash read these routes only
// if it was written: an apply of it that failed while the Deployment's
// went through would otherwise have its routes recorded as rolled.
func (c *computation) configObserved() bool {
	o := c.in.Observed[RNGatewayConfig]
	if o == nil || c.renderedFiles == nil {
		return false
	}
	data, _, _ := unstructured.NestedStringMap(o.Object, "data")
	return maps.Equal(data, c.renderedFiles)
}

// upstreamStatus is u as status holds it; nil for the plain default with
// no routes, which is how every gateway reached engines before engine TLS.
func upstreamStatus(u envoyconfig.Upstream) *v1alpha1.EngineUpstreamStatus {
	if !u.TLS && len(u.Routes) == 0 {
		return nil
	}
	out := &v1alpha1.EngineUpstreamStatus{TLS: u.TLS}
	for _, r := range u.Routes {
		out.Routes = append(out.Routes, v1alpha1.EngineRoute{Engine: r.Engine, Service: r.Service, TLS: r.TLS})
	}
	return out
}

// engineTLSCondition is EngineTLSReady after the gateway is rendered.
func (c *computation) engineTLSCondition(d engineTLS, rolledTrust []string, rolled *v1alpha1.EngineUpstreamStatus) Condition {
	cond := Condition{Type: TypeEngineTLSReady, Status: metav1.ConditionFalse}
	spec := c.in.XR.Spec.TLS
	switch {
	case d.pending != "":
		cond.Reason, cond.Message = d.pending, d.pendingText
	case !d.enabled && d.status == nil && rolled == nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonTLSDisabled, "engines serve plain HTTP"
		if spec == nil || spec.Engine == nil {
			cond.Message = "engine TLS is not configured"
		}
	case !d.enabled:
		cond.Reason, cond.Message = ReasonDraining, "engine TLS is disabled: waiting for "+c.lagging(false)+" and every gateway pod to reach engines over plain HTTP"
	case lagging(c.in.EngineTLS.Routes, c.in.Auth.Engines, true) != nil:
		cond.Reason, cond.Message = ReasonConverging, "waiting for "+c.lagging(true)+" to serve TLS"
	case !equalUpstream(rolled, upstreamStatus(d.upstream)) || !slices.Equal(rolledTrust, d.fingerprints):
		cond.Reason, cond.Message = ReasonConverging, "waiting for every gateway pod to reach engines over TLS, trusting the CAs of every live engine generation"
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonReady, fmt.Sprintf("every engine serves TLS and every gateway pod verifies it against %d CA(s)", len(d.fingerprints))
	}
	return cond
}

// lagging are the engines (listed with their auth hashes, so every one)
// whose published route is not their routing Service in protocol tls.
func lagging(routes map[string]contract.GatewayRoute, engines map[string]string, tls bool) []string {
	var out []string
	for e := range engines {
		if !routable(e) {
			continue
		}
		r, ok := routes[e]
		if !ok {
			r = contract.DefaultRoute(e, false)
		}
		if r != contract.DefaultRoute(e, tls) {
			out = append(out, e)
		}
	}
	slices.Sort(out)
	return out
}

// lagging names the engines not yet on protocol tls, at most
// maxListedEngines of them, with their count.
func (c *computation) lagging(tls bool) string {
	l := lagging(c.in.EngineTLS.Routes, c.in.Auth.Engines, tls)
	if len(l) == 0 {
		return "no engine"
	}
	names := l
	if len(names) > maxListedEngines {
		names = names[:maxListedEngines]
	}
	return fmt.Sprintf("%d engine(s) (%s)", len(l), strings.Join(names, ", "))
}

func equalUpstream(a, b *v1alpha1.EngineUpstreamStatus) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.TLS == b.TLS && slices.Equal(a.Routes, b.Routes)
}

// frozenWhy says why the gateway is kept as it is this call.
func (d engineTLS) frozenWhy() string {
	if d.pendingText != "" {
		return d.pendingText
	}
	return "waiting for Crossplane to list the instance's engines and their CertificateRequests"
}

// engineTLSVolumes are the engine CA bundle and the CRL as the gateway
// container mounts them, while it may reach an engine over TLS.
func engineTLSVolumes(d engineTLS) ([]corev1.Volume, []corev1.VolumeMount) {
	if !d.mount {
		return nil, nil
	}
	vols := []corev1.Volume{{Name: volumeEngineCA, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: d.bundleName},
		Items:                []corev1.KeyToPath{{Key: envoyconfig.EngineCAFile, Path: envoyconfig.EngineCAFile}},
	}}}}
	mounts := []corev1.VolumeMount{{Name: volumeEngineCA, MountPath: envoyconfig.EngineCADir, ReadOnly: true}}
	if d.crl != "" {
		vols = append(vols, corev1.Volume{Name: volumeEngineCRL, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: d.crl,
			Items:      []corev1.KeyToPath{{Key: envoyconfig.EngineCRLFile, Path: envoyconfig.EngineCRLFile}},
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: volumeEngineCRL, MountPath: envoyconfig.EngineCRLDir, ReadOnly: true})
	}
	return vols, mounts
}

// The gateway's engine TLS volumes, named as the original's.
const (
	volumeEngineCA  = "engine-ca"
	volumeEngineCRL = "engine-crl"
)

// issuerKind is an issuer reference's kind, ClusterIssuer when unset as
// the schema defaults it.
func issuerKind(r v1alpha1.IssuerRef) string {
	if r.Kind == "" {
		return "ClusterIssuer"
	}
	return r.Kind
}
