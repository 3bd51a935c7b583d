package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// TypeInstanceAuthReady is the instance condition engines wait on.
const TypeInstanceAuthReady = contract.ConditionAuthReady

// maxQuotedAuth bounds how much of the instance's AuthReady reason and
// message an engine's InstanceReady message repeats: they are whatever the
// instance's status says, and the engine's own reasons must stay visible.
const (
	maxQuotedAuthReason  = 128
	maxQuotedAuthMessage = 512
)

// instanceState is what the engine needs from its FireboltInstance.
type instanceState struct {
	Ready bool
	// Waiting is true while Crossplane has not fetched the instance, or
	// the Secret its auth names, yet: not a failure, the next call
	// carries it.
	Waiting bool
	// Message says why the instance is not ready, or that it is.
	Message string
	// ID and MetadataEndpoint go into config.yaml when Ready.
	ID               string
	MetadataEndpoint string
	// Auth is the instance's authentication the engine runs when Ready;
	// nil while the instance enables none.
	Auth *signing.EngineAuth
	// TLS is the instance's engine TLS a new generation renders when
	// Ready; nil while engines serve plain HTTP.
	TLS *TLS
}

// evaluateInstance applies the original's gate: an instance is usable when
// it exists, its metadata service is ready, it publishes a metadata
// endpoint, it has an id (the one in use, status.id, else spec.id) and,
// when it enables authentication, that authentication is ready: AuthReady
// True, a signing key issued, and the admin password's Secret found with
// its key set. metadataEndpointOverride replaces the endpoint in the
// rendered config; it does not lift the gate.
func evaluateInstance(in Inputs) instanceState {
	ref := fmt.Sprintf("FireboltInstance %s/%s", in.Namespace, in.Instance.Name)
	switch {
	case !in.Instance.Resolved:
		return instanceState{Waiting: true, Message: "waiting for Crossplane to fetch " + ref}
	case !in.Instance.Found:
		return instanceState{Message: ref + " not found"}
	case in.Instance.Err != "":
		return instanceState{Message: ref + ": " + in.Instance.Err}
	}
	st := in.Instance.Status
	// status.id is the account the metadata service serves; the instance
	// never switches it to a later spec.id, so neither may its engines.
	id := st.ID
	if id == "" {
		id = in.Instance.Spec.ID
	}
	var missing []string
	if !st.MetadataReady {
		missing = append(missing, "its metadata service is not ready (status.metadataReady is false)")
	}
	if st.MetadataEndpoint == "" {
		missing = append(missing, "it publishes no metadata endpoint (status.metadataEndpoint is empty)")
	}
	if id == "" {
		missing = append(missing, "it has no id (spec.id and status.id are empty)")
	}
	auth, authProblem, authWaiting := instanceAuth(in)
	if authProblem != "" {
		missing = append(missing, authProblem)
	}
	if len(missing) > 0 {
		msg := ref + " is not ready: " + strings.Join(missing, "; ")
		if authWaiting && len(missing) == 1 {
			return instanceState{Waiting: true, Message: msg}
		}
		return instanceState{Message: msg}
	}
	endpoint := st.MetadataEndpoint
	if o := in.Spec.MetadataEndpointOverride; o != nil && *o != "" {
		endpoint = *o
	}
	return instanceState{Ready: true, Message: ref + " is ready", ID: id, MetadataEndpoint: endpoint, Auth: auth, TLS: instanceTLS(in.Instance)}
}

// instanceAuth is the authentication a found instance gives its engines:
// nil without a problem while it enables none. Otherwise either the auth
// to render, or why the engine must wait (waiting: only because Crossplane
// has not fetched the admin password's Secret yet). The Secret's value is
// never read: its version rolls the engines, which read the password from
// the mounted file.
func instanceAuth(in Inputs) (auth *signing.EngineAuth, problem string, waiting bool) {
	spec := in.Instance.Spec.Auth
	if spec == nil || !spec.Enabled {
		return nil, "", false
	}
	notReady := func(why string) string { return "its authentication is not ready (" + why + ")" }
	if c := in.Instance.AuthReady; c == nil || c.Status != metav1.ConditionTrue {
		if c == nil {
			return nil, notReady(TypeInstanceAuthReady + " is not reported yet"), false
		}
		why := fmt.Sprintf("%s %s", TypeInstanceAuthReady, clipQuoted(c.Reason, maxQuotedAuthReason))
		if c.Message != "" {
			why += ": " + clipQuoted(c.Message, maxQuotedAuthMessage)
		}
		return nil, notReady(why), false
	}
	pw, ok := adminPassword(in.Instance)
	if !ok {
		return nil, notReady("spec.auth.local.admin.password is not set"), false
	}
	if msg := validSecretKey(pw); msg != "" {
		return nil, notReady("spec.auth.local.admin.password: " + msg), false
	}
	secret := fmt.Sprintf("Secret %s/%s", in.Namespace, pw.Name)
	switch s := in.Instance.AdminSecret; {
	case !s.Resolved:
		return nil, notReady("waiting for Crossplane to fetch the admin password's " + secret), true
	case !s.Found:
		return nil, notReady("the admin password's " + secret + " does not exist"), false
	case !s.KeyNonEmpty:
		return nil, notReady(fmt.Sprintf("the admin password's %s has no non-empty key %q", secret, pw.Key)), false
	}
	a, ok := signing.ForEngine(in.Instance.Name, spec, in.Instance.Status.Auth, in.Instance.AdminSecret.ResourceVersion)
	if !ok {
		return nil, notReady("no signing key is issued yet: status.auth lists no Active key"), false
	}
	return &a, "", false
}

// adminPassword is the admin password's Secret key a found instance's
// enabled auth names.
func adminPassword(inst InstanceRef) (corev1.SecretKeySelector, bool) {
	a := inst.Spec.Auth
	if !inst.Found || inst.Err != "" || a == nil || !a.Enabled || a.Local == nil {
		return corev1.SecretKeySelector{}, false
	}
	return a.Local.Admin.Password, true
}

// validSecretKey says why pw cannot name a Secret's key ("" when it can):
// only then is the Secret required and rendered as a volume, so a hostile
// or mistaken name never reaches a requirement or an object.
func validSecretKey(pw corev1.SecretKeySelector) string {
	if errs := validation.IsDNS1123Subdomain(pw.Name); len(errs) > 0 {
		return fmt.Sprintf("name %q is not a Secret name", clipQuoted(pw.Name, 64))
	}
	if errs := validation.IsConfigMapKey(pw.Key); len(errs) > 0 {
		return fmt.Sprintf("key %q is not a Secret key", clipQuoted(pw.Key, 64))
	}
	return ""
}

// clipQuoted cuts s to n bytes on a rune boundary, marked with an ellipsis
// when cut, as valid UTF-8.
func clipQuoted(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// instanceTLS is the engine TLS a found instance gives its engines: its
// spec.tls.engine while enabled, once the instance has issued its anchor
// certificate from that issuer (status.engineTLS.reencrypting), which
// shows the issuer signs with a CA.
func instanceTLS(inst InstanceRef) *TLS {
	t := inst.Spec.TLS
	if t == nil || t.Engine == nil || !t.Engine.Enabled || t.Engine.CertManager == nil || inst.Status.EngineTLS == nil || !inst.Status.EngineTLS.Reencrypting {
		return nil
	}
	return &TLS{Instance: inst.Name, Issuer: *t.Engine.CertManager.DeepCopy()}
}
