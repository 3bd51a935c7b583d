package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuthSpec is instance-wide engine authentication: every engine of the
// instance runs the same embedded authorization server configuration and
// validates the tokens any of them signs. The original operator's fields,
// defaults and rules.
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || has(self.local)",message="spec.auth.local is required when spec.auth.enabled is true"
// +kubebuilder:validation:XValidation:rule="(has(self.enabled) && self.enabled) || (!has(self.local) && !has(self.oidc) && (!has(self.preferredAuthorizationServer) || size(self.preferredAuthorizationServer) == 0))",message="spec.auth.local, spec.auth.oidc and spec.auth.preferredAuthorizationServer must be unset while spec.auth.enabled is false"
// +kubebuilder:validation:XValidation:rule="!has(self.preferredAuthorizationServer) || size(self.preferredAuthorizationServer) == 0 || self.preferredAuthorizationServer == '_local' || (has(self.oidc) && has(self.oidc.providers) && self.oidc.providers.exists(p, has(p.name) && p.name == self.preferredAuthorizationServer))",message="spec.auth.preferredAuthorizationServer must be _local or the name of one of spec.auth.oidc.providers"
type AuthSpec struct {
	// Enabled turns authentication on.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// PreferredAuthorizationServer is the server clients that name none
	// use: _local or an OIDC provider's name. Advisory.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PreferredAuthorizationServer string `json:"preferredAuthorizationServer,omitempty"`

	// Local is the engines' own authorization server: the admin login
	// and the keys tokens are signed with. Required when enabled.
	// +optional
	Local *LocalAuthSpec `json:"local,omitempty"`

	// OIDC adds external identity providers.
	// +optional
	OIDC *OIDCSpec `json:"oidc,omitempty"`
}

// LocalAuthSpec configures the engines' own authorization server.
// +kubebuilder:validation:XValidation:rule="!has(self.signingAlgorithm) || !has(self.signingKeys) || !has(self.signingKeys.certManager) || !has(self.signingKeys.certManager.algorithm) || (self.signingAlgorithm.startsWith('RS') ? self.signingKeys.certManager.algorithm == 'RSA' : self.signingKeys.certManager.algorithm == 'ECDSA')",message="spec.auth.local.signingAlgorithm: RS256, RS384 and RS512 need signingKeys.certManager.algorithm RSA; ES256, ES384 and ES512 need ECDSA"
// +kubebuilder:validation:XValidation:rule="!has(self.signingKeys) || !has(self.signingKeys.certManager) || !has(self.signingKeys.certManager.size) || !has(self.signingAlgorithm) || !self.signingAlgorithm.startsWith('ES') || (self.signingAlgorithm == 'ES256' && self.signingKeys.certManager.size == 256) || (self.signingAlgorithm == 'ES384' && self.signingKeys.certManager.size == 384) || (self.signingAlgorithm == 'ES512' && self.signingKeys.certManager.size == 521)",message="spec.auth.local.signingKeys.certManager.size must match signingAlgorithm: 256 for ES256, 384 for ES384, 521 for ES512"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.signingAlgorithm) || size(oldSelf.signingAlgorithm) == 0 || self.signingAlgorithm == oldSelf.signingAlgorithm",message="spec.auth.local.signingAlgorithm is immutable once set: tokens signed with the old algorithm would no longer validate"
// +kubebuilder:validation:XValidation:rule="has(self.signingKeys)",message="spec.auth.local.signingKeys is required: the keys engines sign tokens with"
type LocalAuthSpec struct {
	// PasswordLogin says who may log in with a password.
	// +kubebuilder:validation:Enum=admin_only;any_user
	// +kubebuilder:default=admin_only
	// +optional
	PasswordLogin string `json:"passwordLogin,omitempty"`

	// Admin is the built-in administrator.
	Admin AdminSpec `json:"admin"`

	// SigningAlgorithm signs the tokens. Immutable once set.
	// +kubebuilder:validation:Enum=RS256;RS384;RS512;ES256;ES384;ES512
	// +kubebuilder:default=ES384
	// +optional
	SigningAlgorithm string `json:"signingAlgorithm,omitempty"`

	// TokenExpiry is how long an issued token is valid (Go durations plus
	// d for days, such as 1h or 1d12h; the engine's default is 1h).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TokenExpiry string `json:"tokenExpiry,omitempty"`

	// MaxTokenAge is the oldest token accepted (the engine's default is
	// 1d).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	MaxTokenAge string `json:"maxTokenAge,omitempty"`

	// ClockSkewTolerance is the clock difference tolerated between
	// engines (the engine's default is 30s).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ClockSkewTolerance string `json:"clockSkewTolerance,omitempty"`

	// SigningKeys are the keys tokens are signed with: cert-manager
	// Certificates the instance composes. Required when auth is enabled.
	// +optional
	SigningKeys *SigningKeyPolicy `json:"signingKeys,omitempty"`
}

// AdminSpec is the built-in administrator.
// +kubebuilder:validation:XValidation:rule="!has(self.password) || !has(self.password.key) || (has(self.password.name) && size(self.password.name) > 0 && size(self.password.key) > 0)",message="spec.auth.local.admin.password: the name and key of the Secret holding the administrator's password are required",fieldPath=".password"
type AdminSpec struct {
	// Name of the administrator.
	// +kubebuilder:default=firebolt
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`

	// Password is a key of a Secret in the instance's namespace holding
	// the administrator's password. It is never generated.
	Password corev1.SecretKeySelector `json:"password"`
}

// SigningKeyPolicy is how signing keys are made and rotated.
// +kubebuilder:validation:XValidation:rule="has(self.rotationInterval) == has(self.retainDuration)",message="spec.auth.local.signingKeys: rotationInterval and retainDuration are set together: retainDuration is how long a demoted key keeps validating tokens"
// +kubebuilder:validation:XValidation:rule="!has(self.rotationInterval) || self.rotationInterval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$')",message="spec.auth.local.signingKeys.rotationInterval must be a Go duration such as 720h or 90m (units ns, us, ms, s, m, h; no d)",fieldPath=".rotationInterval"
// +kubebuilder:validation:XValidation:rule="!has(self.retainDuration) || self.retainDuration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$')",message="spec.auth.local.signingKeys.retainDuration must be a Go duration such as 720h or 90m (units ns, us, ms, s, m, h; no d)",fieldPath=".retainDuration"
// +kubebuilder:validation:XValidation:rule="!has(self.rotationInterval) || !self.rotationInterval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$') || duration(self.rotationInterval) > duration('0s')",message="spec.auth.local.signingKeys.rotationInterval must be positive"
// +kubebuilder:validation:XValidation:rule="!has(self.retainDuration) || !self.retainDuration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$') || duration(self.retainDuration) >= duration('0s')",message="spec.auth.local.signingKeys.retainDuration must not be negative"
// +kubebuilder:validation:XValidation:rule="!has(self.certManager) || !has(oldSelf.certManager) || !has(oldSelf.certManager.size) || oldSelf.certManager.size == 0 || self.certManager.size == oldSelf.certManager.size",message="spec.auth.local.signingKeys.certManager.size is immutable once set"
type SigningKeyPolicy struct {
	// CertManager issues the keys.
	CertManager CertManagerSpec `json:"certManager"`

	// RotationInterval, when set, makes a new key after this long (Go
	// durations, such as 720h). Unset keeps one permanent key.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +optional
	RotationInterval *metav1.Duration `json:"rotationInterval,omitempty"`

	// RetainDuration is how long a demoted key still validates tokens once
	// every engine has stopped signing with it; at least maxTokenAge plus
	// clockSkewTolerance. Set with rotationInterval.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +optional
	RetainDuration *metav1.Duration `json:"retainDuration,omitempty"`
}

// CertManagerSpec is how a cert-manager Certificate is issued.
// +kubebuilder:validation:XValidation:rule="!has(self.duration) || self.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$')",message="certManager.duration must be a Go duration such as 720h or 90m (units ns, us, ms, s, m, h; no d)",fieldPath=".duration"
// +kubebuilder:validation:XValidation:rule="!has(self.renewBefore) || self.renewBefore.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|ms|s|m|h))+)$')",message="certManager.renewBefore must be a Go duration such as 720h or 90m (units ns, us, ms, s, m, h; no d)",fieldPath=".renewBefore"
// +kubebuilder:validation:XValidation:rule="!has(self.algorithm) || !has(self.size) || (self.algorithm == 'RSA' ? self.size in [2048, 4096, 8192] : self.size in [256, 384, 521])",message="size must be 2048, 4096 or 8192 for RSA and 256, 384 or 521 for ECDSA, as cert-manager accepts",fieldPath=".size"
type CertManagerSpec struct {
	// IssuerRef names the cert-manager issuer. An Issuer must be in the
	// instance's namespace.
	IssuerRef IssuerRef `json:"issuerRef"`

	// Algorithm of the private key.
	// +kubebuilder:validation:Enum=RSA;ECDSA
	// +kubebuilder:default=ECDSA
	// +optional
	Algorithm string `json:"algorithm,omitempty"`

	// Size of the private key in bits.
	// +kubebuilder:default=384
	// +optional
	Size int32 `json:"size,omitempty"`

	// Duration of the certificate. Default 365d for signing keys, 90d for
	// TLS.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// RenewBefore the certificate expires. Default 120d for signing keys,
	// 30d for TLS; ignored when not shorter than the duration.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +optional
	RenewBefore *metav1.Duration `json:"renewBefore,omitempty"`
}

// IssuerRef names a cert-manager issuer.
type IssuerRef struct {
	// Name of the issuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Kind of the issuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +kubebuilder:default=ClusterIssuer
	// +optional
	Kind string `json:"kind,omitempty"`
}

// OIDCSpec configures external OIDC identity providers.
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || self.providers.all(p, !has(p.name) || self.providers.exists_one(q, has(q.name) && q.name == p.name))",message="spec.auth.oidc.providers: names must be unique"
// +kubebuilder:validation:XValidation:rule="!has(self.providers) || size(self.providers) < 2 || self.providers.all(p, !has(p.usernameMapping) || p.usernameMapping.contains('{{ iss }}'))",message="spec.auth.oidc.providers: with more than one provider every usernameMapping must contain {{ iss }}, so users of different providers cannot collide"
type OIDCSpec struct {
	// JWT settings for tokens of every provider.
	// +optional
	JWT *OIDCJWTSpec `json:"jwt,omitempty"`

	// Providers are the identity providers.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Providers []OIDCProvider `json:"providers"`
}

// OIDCJWTSpec are the token checks of OIDC tokens.
type OIDCJWTSpec struct {
	// ClockSkewTolerance tolerated on OIDC tokens.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ClockSkewTolerance string `json:"clockSkewTolerance,omitempty"`

	// MaxTokenAge is the oldest OIDC token accepted.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	MaxTokenAge string `json:"maxTokenAge,omitempty"`
}

// OIDCProvider is one identity provider.
type OIDCProvider struct {
	// Name of the provider; may not start with _.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[^_].*$`
	Name string `json:"name"`

	// Title shown to users; default the name.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Title string `json:"title,omitempty"`

	// DiscoveryURL is the provider's OpenID configuration URL.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https://.+`
	DiscoveryURL string `json:"discoveryURL"`

	// Audience expected in tokens; default the instance's issuer.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Audience string `json:"audience,omitempty"`

	// UsernameMapping is the claim template a token's user name is built
	// from, such as {{ email }}.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	UsernameMapping string `json:"usernameMapping"`

	// JITProvisioning creates users on first login.
	// +optional
	JITProvisioning *JITProvisioning `json:"jitProvisioning,omitempty"`

	// JWKS caching.
	// +optional
	JWKS *JWKSSpec `json:"jwks,omitempty"`

	// Discovery refresh.
	// +optional
	Discovery *DiscoverySpec `json:"discovery,omitempty"`
}

// JITProvisioning creates users on their first login.
type JITProvisioning struct {
	// Enabled turns it on.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// DefaultRoles of a user it creates; the engine's default is public.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	DefaultRoles []string `json:"defaultRoles,omitempty"`
}

// JWKSSpec configures the JWKS cache.
type JWKSSpec struct {
	// CacheTTL of the provider's keys (the engine's default is 1h).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	CacheTTL string `json:"cacheTTL,omitempty"`
}

// DiscoverySpec configures the discovery refresh.
type DiscoverySpec struct {
	// RefreshInterval of the provider's configuration (the engine's
	// default is 1d).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	RefreshInterval string `json:"refreshInterval,omitempty"`
}

// SigningKeyPhase is where a signing key is in its life.
// +kubebuilder:validation:Enum=Active;ValidationOnly;Removing
type SigningKeyPhase string

// Signing key phases, the original's.
const (
	// SigningKeyActive signs tokens; exactly one key is Active.
	SigningKeyActive SigningKeyPhase = "Active"
	// SigningKeyValidationOnly validates tokens: freshly minted (no
	// demotedAt) or demoted (demotedAt set).
	SigningKeyValidationOnly SigningKeyPhase = "ValidationOnly"
	// SigningKeyRemoving is rendered no more; its Certificate stays until
	// every engine has dropped it.
	SigningKeyRemoving SigningKeyPhase = "Removing"
)

// RotationStep is what a rotation waits for.
// +kubebuilder:validation:Enum=AwaitingPromotion;AwaitingRetireAnchor;AwaitingRemoval
type RotationStep string

// Rotation steps that wait for every engine.
const (
	RotationAwaitingPromotion    RotationStep = "AwaitingPromotion"
	RotationAwaitingRetireAnchor RotationStep = "AwaitingRetireAnchor"
	RotationAwaitingRemoval      RotationStep = "AwaitingRemoval"
)

// AuthStatus is the state of the instance's signing keys.
type AuthStatus struct {
	// SigningKeys are the keys, oldest first.
	// +kubebuilder:validation:MaxItems=4
	// +optional
	SigningKeys []SigningKeyStatus `json:"signingKeys,omitempty"`

	// SigningKeyGeneration counts the keys ever minted; a key's id is
	// signing-<generation>. Never reset, not even by a disable.
	// +optional
	SigningKeyGeneration int64 `json:"signingKeyGeneration,omitempty"`

	// PendingRotationStep is what a rotation waits for, if anything.
	// +optional
	PendingRotationStep RotationStep `json:"pendingRotationStep,omitempty"`

	// PendingSince is when the pending step began.
	// +optional
	PendingSince *metav1.Time `json:"pendingSince,omitempty"`

	// LaggingEngines are up to five engines the pending step waits for.
	// +kubebuilder:validation:MaxItems=5
	// +optional
	LaggingEngines []string `json:"laggingEngines,omitempty"`

	// LaggingEngineCount is how many engines it waits for.
	// +optional
	LaggingEngineCount int32 `json:"laggingEngineCount,omitempty"`
}

// SigningKeyStatus is one signing key.
type SigningKeyStatus struct {
	// ID is the key id tokens carry (kid), signing-<N>.
	ID string `json:"id"`

	// SecretName is the Secret cert-manager writes the key into.
	SecretName string `json:"secretName"`

	// CreatedAt is when the key was first seen ready.
	// +optional
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`

	// ObservedPublicKeyFingerprint is the hex SHA-256 of the key's DER
	// SubjectPublicKeyInfo, read from its CertificateRequest.
	// +optional
	ObservedPublicKeyFingerprint string `json:"observedPublicKeyFingerprint,omitempty"`

	// Algorithm and Size of the key.
	// +optional
	Algorithm string `json:"algorithm,omitempty"`
	// +optional
	Size int32 `json:"size,omitempty"`

	// Phase of the key.
	// +optional
	Phase SigningKeyPhase `json:"phase,omitempty"`

	// DemotedAt is when the key stopped being the Active one.
	// +optional
	DemotedAt *metav1.Time `json:"demotedAt,omitempty"`

	// RetireEligibleAt is when every engine was seen off it as a signer;
	// retainDuration counts from here.
	// +optional
	RetireEligibleAt *metav1.Time `json:"retireEligibleAt,omitempty"`
}
