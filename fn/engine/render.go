package engine

import (
	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// renderInput is everything a generation's rendering depends on. Anything
// not in here (rollout policy, the observed state) can never roll pods.
type renderInput struct {
	Engine    string
	Namespace string
	Gen       int
	Spec      v1alpha1.FireboltEngineSpec
	// Class is the referenced class's spec; nil without a class.
	Class *v1alpha1.FireboltEngineClassSpec
	// InstanceID and MetadataEndpoint go into config.yaml.
	InstanceID       string
	MetadataEndpoint string
	// CustomConfig is the effective customEngineConfig; nil when empty.
	CustomConfig map[string]any
	Images       v1beta1.Images
	// Phased renders the StatefulSet for in-place updates (rollout:
	// phased): its partition holds every pod and an annotation names its
	// pod template. The rollout policy reaches the rendering through this
	// alone, and a change of it alone never rolls pods (inplace.go).
	Phased bool
	// Auth is the instance's authentication: config.yaml's instance.auth,
	// the credential volumes and their mounts, and the auth-hash
	// annotation. nil renders none of it, exactly as without auth.
	Auth *signing.EngineAuth
	// TLS is the instance's engine TLS: config.yaml's TLS listener, the
	// serving certificate's volume and mount, the startup script's bundle,
	// the UI sidecar's https URL, and the engine-tls annotations the
	// generation's Certificate is rendered from (renderCertificate,
	// certificateOfStatefulSet). nil renders none of it, exactly as
	// without TLS.
	TLS *TLS
}

// renderGeneration renders generation r.Gen's objects from the current
// spec. Pure: equal inputs give equal objects.
func renderGeneration(r renderInput) GenerationObjects {
	return GenerationObjects{
		ConfigMap:   toUnstructured(renderConfigMap(r)),
		Headless:    toUnstructured(renderHeadlessService(r)),
		StatefulSet: toUnstructured(renderStatefulSet(r)),
	}
}

// toUnstructured converts a typed object to the JSON value Crossplane
// applies (composite.ToDesired). Rendered objects are plain API types, so
// a failure is a bug.
func toUnstructured(obj any) map[string]any {
	m, err := composite.ToDesired(obj)
	if err != nil {
		panic("engine: cannot convert rendered object: " + err.Error())
	}
	return m
}
