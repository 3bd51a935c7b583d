package signing

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// Where an engine reads its credentials, as the original mounts them.
const (
	AdminMountPath       = "/secrets/auth/admin"
	SigningMountPathBase = "/secrets/auth/signing"
)

// AnnotationAuthHash on an engine's StatefulSet is the hash of the auth
// configuration its pods run (EngineAuth.Hash); absent without auth. The
// instance compares it, published by each engine, with the hash of the key
// set it gives them, to know when every engine runs it.
const AnnotationAuthHash = "firebolt.io/auth-hash"

// EngineAuth is what an engine is given of its instance's auth: the spec,
// the keys to render (RenderSet of the sanitized status) and the version of
// the admin password's Secret (a password change restarts the engines,
// which read it at start).
type EngineAuth struct {
	Spec               v1alpha1.AuthSpec
	Keys               []v1alpha1.SigningKeyStatus
	AdminSecretVersion string
}

// ForEngine is the auth engines of instance run, or false when auth is off
// or no key is issued yet (engines then wait: AuthReady is not True).
func ForEngine(instance string, spec *v1alpha1.AuthSpec, status *v1alpha1.AuthStatus, adminSecretVersion string) (EngineAuth, bool) {
	if spec == nil || !spec.Enabled || spec.Local == nil || status == nil {
		return EngineAuth{}, false
	}
	keys := RenderSet(Sanitize(instance, *status))
	if len(keys) == 0 {
		return EngineAuth{}, false
	}
	return EngineAuth{Spec: *spec.DeepCopy(), Keys: keys, AdminSecretVersion: adminSecretVersion}, true
}

// Hash is the first 16 hex digits of the SHA-256 of what the engine's auth
// configuration is made of, as the original's: the spec without the
// rotation timings (which change no engine), each rendered key's id, Secret
// and public key, and the admin Secret's version.
func (a EngineAuth) Hash() string {
	spec := *a.Spec.DeepCopy()
	if spec.Local != nil && spec.Local.SigningKeys != nil {
		spec.Local.SigningKeys.RotationInterval, spec.Local.SigningKeys.RetainDuration = nil, nil
	}
	type key struct {
		ID, SecretName, PublicKeyFingerprint string
	}
	keys := make([]key, 0, len(a.Keys))
	for _, k := range a.Keys {
		keys = append(keys, key{k.ID, k.SecretName, k.ObservedPublicKeyFingerprint})
	}
	// The hash is over these names as they are: tags would change every
	// engine's hash, and so roll every engine, for nothing.
	b, err := json.Marshal(struct { //nolint:musttag // See above.
		Spec         v1alpha1.AuthSpec
		Keys         []key
		AdminVersion string
	}{spec, keys, a.AdminSecretVersion})
	if err != nil {
		panic("signing: cannot encode the auth hash input: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// Config is config.yaml's instance.auth block. Empty optional strings are
// left out, so the engine's own defaults apply (it refuses an empty value);
// the password is only ever a file path.
func (a EngineAuth) Config() map[string]any {
	l := a.Spec.Local
	keys := make([]any, 0, len(a.Keys))
	for _, k := range a.Keys {
		keys = append(keys, map[string]any{"id": k.ID, "private_key_path": path.Join(SigningMountPathBase, k.ID, corev1.TLSPrivateKeyKey)})
	}
	local := map[string]any{"signing_keys": keys}
	put(local, "signing_algorithm", l.SigningAlgorithm)
	jwt := map[string]any{}
	put(jwt, "token_expiry", l.TokenExpiry)
	put(jwt, "max_token_age", l.MaxTokenAge)
	put(jwt, "clock_skew_tolerance", l.ClockSkewTolerance)
	if len(jwt) > 0 {
		local["jwt"] = jwt
	}
	out := map[string]any{
		"enabled": true,
		"admin":   map[string]any{"name": l.Admin.Name, "password_file": path.Join(AdminMountPath, l.Admin.Password.Key)},
		"local":   local,
	}
	put(out, "password_login", l.PasswordLogin)
	put(out, "preferred_authorization_server", a.Spec.PreferredAuthorizationServer)
	if o := a.Spec.OIDC; o != nil {
		out["oidc"] = oidcConfig(o)
	}
	return out
}

func oidcConfig(o *v1alpha1.OIDCSpec) map[string]any {
	providers := make([]any, 0, len(o.Providers))
	for _, p := range o.Providers {
		m := map[string]any{"name": p.Name, "discovery_url": p.DiscoveryURL, "username_mapping": p.UsernameMapping}
		put(m, "title", p.Title)
		put(m, "audience", p.Audience)
		if j := p.JITProvisioning; j != nil {
			jit := map[string]any{"enabled": j.Enabled}
			if len(j.DefaultRoles) > 0 {
				roles := make([]any, 0, len(j.DefaultRoles))
				for _, r := range j.DefaultRoles {
					roles = append(roles, r)
				}
				jit["default_roles"] = roles
			}
			m["jit_provisioning"] = jit
		}
		if j := p.JWKS; j != nil {
			c := map[string]any{}
			put(c, "cache_ttl", j.CacheTTL)
			m["jwks"] = c
		}
		if d := p.Discovery; d != nil {
			c := map[string]any{}
			put(c, "refresh_interval", d.RefreshInterval)
			m["discovery"] = c
		}
		providers = append(providers, m)
	}
	out := map[string]any{"providers": providers}
	if j := o.JWT; j != nil {
		jwt := map[string]any{}
		put(jwt, "clock_skew_tolerance", j.ClockSkewTolerance)
		put(jwt, "max_token_age", j.MaxTokenAge)
		if len(jwt) > 0 {
			out["jwt"] = jwt
		}
	}
	return out
}

// Volumes are the engine pod's credential volumes: the admin password and
// one per rendered key, each the Secret cert-manager writes.
func (a EngineAuth) Volumes() []corev1.Volume {
	out := make([]corev1.Volume, 0, 1+len(a.Keys))
	out = append(out, corev1.Volume{Name: podtemplate.VolumeAuthAdmin, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: a.Spec.Local.Admin.Password.Name,
		Items:      []corev1.KeyToPath{{Key: a.Spec.Local.Admin.Password.Key, Path: a.Spec.Local.Admin.Password.Key}},
	}}})
	for _, k := range a.Keys {
		out = append(out, corev1.Volume{Name: podtemplate.VolumeAuthSigningPrefix + k.ID, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: k.SecretName,
			Items:      []corev1.KeyToPath{{Key: corev1.TLSPrivateKeyKey, Path: corev1.TLSPrivateKeyKey}},
		}}})
	}
	return out
}

// Mounts are where the engine container reads them, read-only.
func (a EngineAuth) Mounts() []corev1.VolumeMount {
	out := make([]corev1.VolumeMount, 0, 1+len(a.Keys))
	out = append(out, corev1.VolumeMount{Name: podtemplate.VolumeAuthAdmin, MountPath: AdminMountPath, ReadOnly: true})
	for _, k := range a.Keys {
		out = append(out, corev1.VolumeMount{Name: podtemplate.VolumeAuthSigningPrefix + k.ID, MountPath: path.Join(SigningMountPathBase, k.ID), ReadOnly: true})
	}
	return out
}

func put(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}
