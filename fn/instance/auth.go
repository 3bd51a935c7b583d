package instance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/certmanager"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// TypeAuthReady says whether engines can run the instance's auth.
const TypeAuthReady = contract.ConditionAuthReady

// Reasons of AuthReady, the original's.
const (
	ReasonAuthDisabled              = "Disabled"
	ReasonAuthSpecInvalid           = "AuthSpecInvalid"
	ReasonAdminSecretMissing        = "AdminSecretMissing"
	ReasonSigningKeyPending         = "SigningKeyPending"
	ReasonRotationWaitingForEngines = "RotationWaitingForEngines"
)

// Requirement names of auth's reads.
const (
	reqAdminSecret = "auth-admin-secret"
	reqEngines     = "auth-engines"
	// reqCertificateRequest prefixes one requirement per signing key: the
	// CertificateRequest of its Certificate's current revision.
	reqCertificateRequest = "auth-certificate-request-"
)

// rnSigningKey is the composition-resource-name of a signing key's
// Certificate.
func rnSigningKey(id string) resource.Name { return resource.Name("auth-" + id) }

// Signing Certificates, as the original makes them: a year long, renewed
// 120 days early, the key never rotated by cert-manager (rotation is the
// instance's: a renewal keeps the key engines hold).
const (
	signingCommonName  = "firebolt-jwt-signing"
	signingDuration    = 365 * 24 * time.Hour
	signingRenewBefore = 120 * 24 * time.Hour
	componentAuth      = "auth-signing"
)

// rotationStalledAfter is how long a rotation step may wait for engines
// before every call warns, as the original's.
const rotationStalledAfter = 15 * time.Minute

// fleetPoll is how often an instance looks again while it waits for its
// engines or the admin Secret. Both are required objects, which Crossplane
// watches, so a change normally calls the function at once; the poll is a
// backstop (a lost event would otherwise stall a rotation until the stable
// TTL) and costs calls only while something is awaited. The original polls
// every 30 s.
const fleetPoll = 30 * time.Second

// AuthInputs are what auth reads besides the spec and status.
type AuthInputs struct {
	// AdminSecret are the facts about the admin password's Secret (never
	// its value).
	AdminSecret composite.SecretFacts
	// PublicKeys are the public key fingerprints of the signing keys'
	// current CertificateRequests, by key id.
	PublicKeys map[string]string
	// Engines are the auth hashes the instance's engines publish, by
	// engine; EnginesResolved is false until Crossplane has listed them.
	Engines         map[string]string
	EnginesResolved bool
}

// auth composes the signing keys' Certificates, takes the rotation's step
// and says AuthReady. Nothing about a key's private half is read: a
// Certificate's status says it is issued, its CertificateRequest (public)
// names the key.
func (c *computation) auth(now time.Time) Condition {
	spec := c.in.XR.Spec.Auth
	prev := c.in.XR.Status.Auth
	cond := Condition{Type: TypeAuthReady, Status: metav1.ConditionTrue, Reason: ReasonAuthDisabled, Message: "authentication is disabled"}
	if spec == nil || !spec.Enabled {
		if prev != nil {
			// The generation survives a disable, so a re-enable mints a
			// new key id and never reuses a Secret.
			c.plan.Status.Auth = &v1alpha1.AuthStatus{SigningKeyGeneration: prev.SigningKeyGeneration}
		}
		c.leftovers(nil, "")
		return cond
	}
	status := v1alpha1.AuthStatus{}
	if prev != nil {
		status = *prev
	}
	keep := func() {
		// What exists is kept while nothing can be decided.
		st := signing.Sanitize(c.n.instance, status)
		c.plan.Status.Auth = &st
		for rn := range c.in.Observed {
			if strings.HasPrefix(string(rn), "auth-") {
				c.freeze(rn)
			}
		}
	}
	floor, msg := validateAuth(spec)
	if msg != "" {
		keep()
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonAuthSpecInvalid, msg
		return cond
	}
	local := spec.Local
	pw := local.Admin.Password
	c.plan.Requirements[reqAdminSecret] = composite.Select("v1", "Secret", c.n.namespace, pw.Name)
	c.requireEngines()
	admin := c.in.Auth.AdminSecret
	switch {
	case !admin.Resolved:
		keep()
		c.wake = append(c.wake, fleetPoll)
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonAdminSecretMissing, "waiting for Crossplane to fetch Secret "+pw.Name
		return cond
	case !admin.Found || !admin.KeyNonEmpty:
		keep()
		c.wake = append(c.wake, fleetPoll)
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonAdminSecretMissing
		cond.Message = fmt.Sprintf("spec.auth.local.admin.password: Secret %s/%s has no non-empty key %q; create it (the password is never generated)", c.n.namespace, pw.Name, pw.Key)
		return cond
	}
	return c.rotate(spec, status, admin.ResourceVersion, floor, now)
}

// rotate takes the rotation's step for a valid spec whose admin Secret is
// in place, composes the keys' Certificates and says AuthReady. floor is
// how long a demoted key must be kept.
func (c *computation) rotate(spec *v1alpha1.AuthSpec, status v1alpha1.AuthStatus, adminVersion string, floor time.Duration, now time.Time) Condition {
	local := spec.Local
	cond := Condition{Type: TypeAuthReady, Status: metav1.ConditionTrue}
	policy := signing.Policy{Algorithm: local.SigningKeys.CertManager.Algorithm, Size: local.SigningKeys.CertManager.Size}
	if d := local.SigningKeys.RotationInterval; d != nil {
		policy.Interval = d.Duration
	}
	raised := false
	if d := local.SigningKeys.RetainDuration; d != nil {
		r := d.Duration
		if r < floor {
			r, raised = floor, true
		}
		policy.Retain = &r
	}
	render := signing.RenderSet(signing.Sanitize(c.n.instance, status))
	fleet := c.fleet(signing.EngineAuth{Spec: *spec, Keys: render, AdminSecretVersion: adminVersion}.Hash())
	d := signing.Decide(signing.Input{
		Now: now, Instance: c.n.instance, Policy: policy, Previous: status, Keys: c.signingKeys(), Fleet: fleet,
	})
	c.plan.Status.Auth = &d.Status
	for _, id := range d.Compose {
		if err := c.add(rnSigningKey(id), c.signingCertificate(id)); err != nil {
			// Rendering a Certificate from a validated spec cannot fail.
			panic("instance: cannot render a signing Certificate: " + err.Error())
		}
		if name := c.currentRequest(id); name != "" {
			c.plan.Requirements[reqCertificateRequest+id] = composite.Select("cert-manager.io/v1", "CertificateRequest", c.n.namespace, name)
		}
	}
	if d.Pending {
		// Engines run the previous keys until the new one is issued.
		c.leftovers(d.Compose, "")
	} else {
		c.leftovers(d.Compose, signing.EngineAuth{Spec: *spec, Keys: signing.RenderSet(d.Status), AdminSecretVersion: adminVersion}.Hash())
	}
	for _, e := range d.Events {
		sev := composite.SeverityNormal
		if e.Warning {
			sev = composite.SeverityWarning
		}
		c.plan.Results = append(c.plan.Results, Result{Severity: sev, Reason: e.Reason, Message: e.Message})
	}
	if st := d.Status; st.PendingRotationStep != "" && st.PendingSince != nil && now.Sub(st.PendingSince.Time) >= rotationStalledAfter {
		c.plan.Results = append(c.plan.Results, Result{Severity: composite.SeverityWarning, Reason: "SigningKeyRotationStalled",
			Message: fmt.Sprintf("rotation step %s has waited %s for %d engine(s) to run the current keys: %s",
				st.PendingRotationStep, now.Sub(st.PendingSince.Time).Truncate(time.Second), st.LaggingEngineCount, strings.Join(st.LaggingEngines, ", "))})
	}
	if at := signing.NextWake(d.Status, policy, now); !at.IsZero() {
		c.wake = append(c.wake, at.Sub(now)+time.Second)
	}
	switch {
	case d.Pending:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonSigningKeyPending
		cond.Message = fmt.Sprintf("waiting for cert-manager to issue signing key %s (Certificate %s)", pendingKey(d.Status), signing.CertificateName(c.n.instance, pendingKey(d.Status)))
	case d.Status.PendingRotationStep != "":
		c.wake = append(c.wake, fleetPoll)
		cond.Reason = ReasonRotationWaitingForEngines
		cond.Message = fmt.Sprintf("rotation step %s waits for %d engine(s) to run the current keys (%s): %s",
			d.Status.PendingRotationStep, d.Status.LaggingEngineCount, signing.Describe(d.Status), strings.Join(d.Status.LaggingEngines, ", "))
	default:
		cond.Reason, cond.Message = ReasonReady, "signing keys: "+signing.Describe(d.Status)
	}
	if raised {
		cond.Message += fmt.Sprintf("; a demoted key is kept %s (maxTokenAge + clockSkewTolerance), not retainDuration %s, so no valid token is rejected",
			floor, local.SigningKeys.RetainDuration.Duration)
	}
	return cond
}

func pendingKey(st v1alpha1.AuthStatus) string {
	for _, k := range st.SigningKeys {
		if k.Phase == v1alpha1.SigningKeyActive {
			return k.ID
		}
	}
	return signing.KeyID(st.SigningKeyGeneration + 1)
}

// requireEngines asks for the instance's engines' routing Services, on
// which each engine publishes the auth hash its pods run. One list per
// call, whatever the number of engines: the instance's cost grows with its
// engines, not with their square.
func (c *computation) requireEngines() {
	c.plan.Requirements[reqEngines] = &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "Service", Namespace: &c.n.namespace,
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
			contract.LabelInstanceRef: c.n.instance, contract.LabelComponent: contract.ComponentEngineRouting,
		}}},
	}
}

// fleet says whether every engine of the instance publishes want, the
// hash of the auth it is given ("" with auth off). No engine is
// vacuously converged; engines not listed yet are not.
func (c *computation) fleet(want string) signing.Fleet {
	if !c.in.Auth.EnginesResolved {
		return signing.Fleet{Lagging: []string{"(engines not listed yet)"}}
	}
	f := signing.Fleet{Converged: true}
	for e, h := range c.in.Auth.Engines {
		if h != want {
			f.Converged = false
			f.Lagging = append(f.Lagging, e)
		}
	}
	slices.Sort(f.Lagging)
	return f
}

// leftovers keeps every observed signing Certificate the call does not
// compose (auth disabled, or a key of an earlier enable) until every
// engine runs want, a key set without it: an engine still running a key
// must find its Secret when a pod restarts. Then it is left out, and
// Crossplane deletes it. want "" with a pending key: engines are held on
// their previous keys, so nothing is dropped.
func (c *computation) leftovers(compose []string, want string) {
	var left []resource.Name
	for rn, o := range c.in.Observed {
		id, ok := strings.CutPrefix(string(rn), "auth-")
		if !ok || o == nil || slices.Contains(compose, id) {
			continue
		}
		left = append(left, rn)
	}
	if len(left) == 0 {
		return
	}
	c.requireEngines()
	if want == "" && c.in.XR.Spec.Auth != nil && c.in.XR.Spec.Auth.Enabled {
		c.freeze(left...)
		return
	}
	if !c.fleet(want).Converged {
		c.freeze(left...)
		c.wake = append(c.wake, fleetPoll)
	}
}

// signingKeys are the observed signing Certificates by key id: issued
// (Ready for their current generation) and their public key.
func (c *computation) signingKeys() map[string]signing.Key {
	out := map[string]signing.Key{}
	for rn, o := range c.in.Observed {
		id, ok := strings.CutPrefix(string(rn), "auth-")
		if !ok || o == nil {
			continue
		}
		fp := c.in.Auth.PublicKeys[id]
		out[id] = signing.Key{Ready: certificateReady(o) && fp != "", Fingerprint: fp}
	}
	return out
}

// currentRequest is the CertificateRequest of key id's current revision:
// cert-manager names it <certificate>-<revision>; "" before one is issued.
func (c *computation) currentRequest(id string) string {
	o := c.in.Observed[rnSigningKey(id)]
	if o == nil {
		return ""
	}
	rev := integer(o, "status.revision")
	if rev < 1 {
		return ""
	}
	return signing.CertificateName(c.n.instance, id) + "-" + strconv.FormatInt(rev, 10)
}

// signingCertificate is key id's cert-manager Certificate, as the
// original's: its Secret of the same name, no SAN, signing only, PKCS#8,
// and rotationPolicy Never, so a renewal never changes the key engines
// hold.
func (c *computation) signingCertificate(id string) *unstructured.Unstructured {
	cm := c.in.XR.Spec.Auth.Local.SigningKeys.CertManager
	return c.certificate(signing.CertificateName(c.n.instance, id), componentAuth, cm, signingDuration, signingRenewBefore, map[string]any{
		"commonName": signingCommonName,
		"usages":     []any{"digital signature"},
		"privateKey": map[string]any{"rotationPolicy": "Never", "encoding": "PKCS8", "algorithm": cm.Algorithm, "size": int64(cm.Size)},
	})
}

// validateAuth checks what the schema cannot: the duration strings (Go
// units plus d) and that a demoted key outlives every token signed with it.
// It returns how long a demoted key must be kept (maxTokenAge +
// clockSkewTolerance) and a message naming each field and its rule, ""
// when valid.
//
// The original refuses a retainDuration below maxTokenAge +
// clockSkewTolerance, which refuses its own example (24h against the
// defaults' 24h + 30s). Here only one below maxTokenAge is refused; one
// between the two is raised to the sum, which keeps every token valid and
// the example working.
func validateAuth(a *v1alpha1.AuthSpec) (time.Duration, string) {
	l := a.Local
	if l == nil || l.SigningKeys == nil {
		return 0, "spec.auth.local.signingKeys: required when spec.auth.enabled is true"
	}
	var msgs []string
	check := func(field, v string, positive bool) (time.Duration, bool) {
		if v == "" {
			return 0, false
		}
		d, err := parseDuration(v)
		switch {
		case err != nil:
			msgs = append(msgs, fmt.Sprintf("%s: %q must be a valid duration string (Go units and d, such as 1h or 1d12h)", field, clipValue(v)))
			return 0, false
		case positive && d <= 0:
			msgs = append(msgs, fmt.Sprintf("%s: %q must be positive", field, clipValue(v)))
			return 0, false
		case !positive && d < 0:
			msgs = append(msgs, fmt.Sprintf("%s: %q must not be negative", field, clipValue(v)))
			return 0, false
		}
		return d, true
	}
	check("spec.auth.local.tokenExpiry", l.TokenExpiry, true)
	maxAge, ok := check("spec.auth.local.maxTokenAge", l.MaxTokenAge, true)
	if !ok {
		maxAge = 24 * time.Hour
	}
	skew, ok := check("spec.auth.local.clockSkewTolerance", l.ClockSkewTolerance, false)
	if !ok && l.ClockSkewTolerance == "" {
		skew = 30 * time.Second
	}
	if o := a.OIDC; o != nil {
		if o.JWT != nil {
			check("spec.auth.oidc.jwt.maxTokenAge", o.JWT.MaxTokenAge, true)
			check("spec.auth.oidc.jwt.clockSkewTolerance", o.JWT.ClockSkewTolerance, false)
		}
		for i, p := range o.Providers {
			if p.JWKS != nil {
				check(fmt.Sprintf("spec.auth.oidc.providers[%d].jwks.cacheTTL", i), p.JWKS.CacheTTL, false)
			}
			if p.Discovery != nil {
				check(fmt.Sprintf("spec.auth.oidc.providers[%d].discovery.refreshInterval", i), p.Discovery.RefreshInterval, true)
			}
			if len(o.Providers) == 1 && !strings.Contains(p.UsernameMapping, "{{") && p.UsernameMapping == l.Admin.Name {
				msgs = append(msgs, fmt.Sprintf("spec.auth.oidc.providers[%d].usernameMapping: a literal mapping may not be the admin's name %q", i, l.Admin.Name))
			}
		}
	}
	if r := l.SigningKeys.RetainDuration; r != nil && r.Duration < maxAge {
		msgs = append(msgs, fmt.Sprintf("spec.auth.local.signingKeys.retainDuration: %s must be at least maxTokenAge (%s), or a token signed just before its key was demoted is rejected before it expires",
			r.Duration, maxAge))
	}
	return maxAge + skew, strings.Join(msgs, "; ")
}

// clipValue bounds a user's value repeated in a message.
func clipValue(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// readAuth reads what auth needs of the request: the admin Secret's facts
// (never its value), the public keys of the signing keys' current
// CertificateRequests and the engines' routing Services.
func readAuth(req *fnv1.RunFunctionRequest, spec *v1alpha1.AuthSpec) (AuthInputs, error) {
	out := AuthInputs{PublicKeys: map[string]string{}, Engines: map[string]string{}}
	if spec != nil && spec.Enabled && spec.Local != nil {
		pw := spec.Local.Admin.Password
		out.AdminSecret = composite.RequiredSecretFacts(req, reqAdminSecret, pw.Name, pw.Key)
	}
	for name, rs := range req.GetRequiredResources() {
		id, ok := strings.CutPrefix(name, reqCertificateRequest)
		if !ok || len(rs.GetItems()) == 0 {
			continue
		}
		if fp := certmanager.PublicKeyFingerprint(rs.GetItems()[0].GetResource().AsMap()); fp != "" {
			out.PublicKeys[id] = fp
		}
	}
	svcs, resolved, err := composite.Required(req, reqEngines, "engine routing Services")
	if err != nil {
		return AuthInputs{}, err
	}
	out.EnginesResolved = resolved
	for _, s := range svcs {
		engine := s.Resource.GetLabels()[contract.LabelEngine]
		if engine == "" {
			continue
		}
		out.Engines[engine] = s.Resource.GetAnnotations()[contract.AnnotationObservedAuthHash]
	}
	return out, nil
}
