// Package instancestate is what a FireboltInstance publishes for its
// engines, and how engines read it back.
//
// Engines used to require the instance's claim: Crossplane watches what a
// composite requires, so every write of the claim (its status on every
// rotation step, every lastReconciled, every condition's message) called
// every engine of the instance, and the instance's cost grew with the
// square of its engines. The instance now composes one ConfigMap holding
// only what an engine reads of it, reduced so that it changes only when an
// engine's rendering or gate would: the same lever the class pulled for its
// spec.
package instancestate

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

const (
	// suffix ends the ConfigMap's name, <instance>-engines. Instance
	// names are at most 40 characters, so it always fits.
	suffix = "-engines"
	// Key is the data key holding the State as JSON.
	Key = "instance"
	// ErrorKey holds, instead, why the State cannot be published; engines
	// report it.
	ErrorKey = "error"
	// maxBytes is the most a ConfigMap holds: the API server refuses one
	// whose data adds up to more than 1 MiB.
	maxBytes = 1<<20 - len(Key)
)

// ConfigMapName is the name of the ConfigMap instance publishes.
func ConfigMapName(instance string) string { return instance + suffix }

// State is an instance as its engines see it.
type State struct {
	// SpecID is spec.id.
	SpecID string `json:"specID,omitempty"`
	// MetricScrapeMode is spec.metricScrapeMode.
	MetricScrapeMode v1alpha1.MetricScrapeMode `json:"metricScrapeMode,omitempty"`
	// ExternalPostgresSecret is spec.metadata.postgres.credentialsSecretRef.name:
	// a Secret no engine template may reach.
	ExternalPostgresSecret string `json:"externalPostgresSecret,omitempty"`
	// Auth is spec.auth.
	Auth *v1alpha1.AuthSpec `json:"auth,omitempty"`

	// ID, MetadataReady and MetadataEndpoint are the status's.
	ID               string `json:"id,omitempty"`
	MetadataReady    bool   `json:"metadataReady"`
	MetadataEndpoint string `json:"metadataEndpoint,omitempty"`
	// SigningKeys are the keys engines run (signing.RenderSet), each with
	// only what an engine renders or hashes; SigningKeyGeneration bounds
	// their ids as the status's does.
	SigningKeys          []v1alpha1.SigningKeyStatus `json:"signingKeys,omitempty"`
	SigningKeyGeneration int64                       `json:"signingKeyGeneration,omitempty"`

	// AuthReady is the AuthReady condition's status and reason, and its
	// message while it is not True (a True one's message changes at every
	// rotation step and no engine reads it).
	AuthReady *composite.Condition `json:"authReady,omitempty"`

	// EngineTLS is spec.tls.engine.certManager while engines are to serve
	// TLS: engine TLS enabled and its anchor certificate issued by its
	// issuer (status.engineTLS.reencrypting). nil: engines serve plain
	// HTTP.
	EngineTLS *v1alpha1.CertManagerSpec `json:"engineTLS,omitempty"`
	// RolledEngineTrustCAs and RolledEngineUpstream are the status's:
	// what every gateway pod is confirmed to trust and how it reaches
	// engines. They change only when an engine CA or an engine's protocol
	// does, not at every rollout.
	RolledEngineTrustCAs []string                       `json:"rolledEngineTrustCAs,omitempty"`
	RolledEngineUpstream *v1alpha1.EngineUpstreamStatus `json:"rolledEngineUpstream,omitempty"`
}

// Of is what an instance called instance with spec and next status (the
// status this call writes) and AuthReady condition publishes.
func Of(instance string, spec v1alpha1.FireboltInstanceSpec, status v1alpha1.FireboltInstanceStatus, authReady *composite.Condition) State {
	s := State{
		SpecID:           spec.ID,
		MetricScrapeMode: spec.MetricScrapeMode,
		Auth:             spec.Auth.DeepCopy(),
		ID:               status.ID,
		MetadataReady:    status.MetadataReady,
		MetadataEndpoint: status.MetadataEndpoint,
	}
	if pg := spec.Metadata.Postgres; pg != nil {
		s.ExternalPostgresSecret = pg.CredentialsSecretRef.Name
	}
	if a := status.Auth; a != nil {
		st := signing.Sanitize(instance, *a)
		for _, k := range signing.RenderSet(st) {
			s.SigningKeys = append(s.SigningKeys, v1alpha1.SigningKeyStatus{
				ID: k.ID, SecretName: k.SecretName, ObservedPublicKeyFingerprint: k.ObservedPublicKeyFingerprint,
				Algorithm: k.Algorithm, Size: k.Size, Phase: k.Phase,
			})
		}
		s.SigningKeyGeneration = st.SigningKeyGeneration
	}
	if t := spec.TLS; t != nil && t.Engine != nil && t.Engine.Enabled && t.Engine.CertManager != nil && status.EngineTLS != nil && status.EngineTLS.Reencrypting {
		s.EngineTLS = t.Engine.CertManager.DeepCopy()
	}
	s.RolledEngineTrustCAs = append([]string(nil), status.RolledEngineTrustCAs...)
	s.RolledEngineUpstream = status.RolledEngineUpstream.DeepCopy()
	if c := authReady; c != nil {
		s.AuthReady = &composite.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason}
		if c.Status != metav1.ConditionTrue {
			s.AuthReady.Message = c.Message
		}
	}
	return s
}

// Spec is the part of the instance's spec the State holds.
func (s State) Spec() v1alpha1.FireboltInstanceSpec {
	spec := v1alpha1.FireboltInstanceSpec{ID: s.SpecID, MetricScrapeMode: s.MetricScrapeMode, Auth: s.Auth.DeepCopy()}
	if s.ExternalPostgresSecret != "" {
		spec.Metadata.Postgres = &v1alpha1.PostgresSpec{CredentialsSecretRef: v1alpha1.SecretReference{Name: s.ExternalPostgresSecret}}
	}
	if s.EngineTLS != nil {
		spec.TLS = &v1alpha1.TLSSpec{Engine: &v1alpha1.TLSListenerSpec{Enabled: true, CertManager: s.EngineTLS.DeepCopy()}}
	}
	return spec
}

// Status is the part of the instance's status the State holds.
func (s State) Status() v1alpha1.FireboltInstanceStatus {
	st := v1alpha1.FireboltInstanceStatus{ID: s.ID, MetadataReady: s.MetadataReady, MetadataEndpoint: s.MetadataEndpoint}
	if len(s.SigningKeys) > 0 || s.SigningKeyGeneration > 0 {
		st.Auth = &v1alpha1.AuthStatus{SigningKeys: append([]v1alpha1.SigningKeyStatus(nil), s.SigningKeys...), SigningKeyGeneration: s.SigningKeyGeneration}
	}
	if s.EngineTLS != nil {
		// Engines read only that engine TLS is on; the anchor's Secret
		// is the instance's.
		st.EngineTLS = &v1alpha1.EngineTLSStatus{Reencrypting: true}
	}
	st.RolledEngineTrustCAs = append([]string(nil), s.RolledEngineTrustCAs...)
	st.RolledEngineUpstream = s.RolledEngineUpstream.DeepCopy()
	return st
}

// ConfigMap renders the ConfigMap that publishes s: data.instance, or
// data.error when s cannot be published. encoding/json writes struct fields
// in order and sorts map keys, so the same State is the same string on
// every call, and the ConfigMap changes only when the State does.
func ConfigMap(namespace, instance string, s State) (*corev1.ConfigMap, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the state engines read: %w", err)
	}
	data := map[string]string{Key: string(b)}
	if len(b) > maxBytes {
		data = map[string]string{ErrorKey: fmt.Sprintf("FireboltInstance %s/%s cannot publish its state for engines: %d bytes as JSON, more than the %d a ConfigMap holds", namespace, instance, len(b), maxBytes)}
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ConfigMapName(instance), Namespace: namespace,
			Labels: map[string]string{contract.LabelInstanceRef: instance, contract.LabelComponent: Component},
		},
		Data: data,
	}, nil
}

// Component is contract.LabelComponent's value on the ConfigMap.
const Component = "engine-state"

// Decode reads what the ConfigMap's data holds: the State, or why there is
// none (its error, or why it cannot be read). The data was bounded by the
// API server (1 MiB a ConfigMap).
func Decode(data map[string]string) (State, string) {
	raw, ok := data[Key]
	if !ok {
		if msg := data[ErrorKey]; msg != "" {
			return State{}, msg
		}
		return State{}, "its ConfigMap has no data." + Key
	}
	var s State
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return State{}, "cannot decode data." + Key + " of its ConfigMap: " + err.Error()
	}
	return s, ""
}
