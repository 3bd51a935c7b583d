package class

import (
	"fmt"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Deletion protection is Crossplane's own: every engine that names a class
// composes a namespaced Usage of the class's claim. Crossplane's Usage
// controller then labels the claim crossplane.io/in-use, and its
// crossplane-no-usages webhook refuses to delete a labelled object while a
// Usage of it exists, answering 409 Conflict with
//
//	This resource is in-use by 2 usage(s), including the *v1beta1.Usage
//	"e1-engineclass" (in namespace "firebolt") with reason:
//	"FireboltEngine \"e1\" uses this FireboltEngineClass".
//
// When the engine stops naming the class (or is deleted) its Usage leaves
// the desired state and Crossplane deletes it; once no Usage is left the
// deletion goes through.

// Usage API, as Crossplane v2 serves it.
const (
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	UsageKind       = "Usage"
)

// UsageResourceName is the composition resource name under which an engine
// composes the Usage of its class. The object name stays the engine's, so a
// class change keeps the resource and only moves spec.of.
const UsageResourceName resource.Name = "engineclass-usage"

// Labels on the Usage, to find an engine's Usage or a class's users.
const (
	LabelEngine      = "firebolt.io/engine"
	LabelEngineClass = "firebolt.io/engine-class"
)

// UsageName is the name of the Usage an engine composes.
func UsageName(engine string) string { return engine + "-engineclass" }

// Usage renders the Usage an engine composes for the class it uses: the
// FireboltEngineClass claim class, in the engine's namespace, held by the
// FireboltEngine claim engine. The reason names the engine, so the refusal
// of a deletion does.
//
// replayDeletion is set: when a deletion was refused (e.g. Argo CD pruned
// an engine and its class together) Crossplane deletes the class once the
// last Usage is gone, so the pair converges without a retry.
func Usage(namespace, engine, class string) *composed.Unstructured {
	u := composed.New()
	u.SetUnstructuredContent(map[string]any{
		"apiVersion": UsageAPIVersion,
		"kind":       UsageKind,
		"metadata": map[string]any{
			"name":      UsageName(engine),
			"namespace": namespace,
			"labels": map[string]any{
				LabelEngine:      engine,
				LabelEngineClass: class,
			},
		},
		"spec": map[string]any{
			"of": map[string]any{
				"apiVersion":  v1alpha1.SchemeGroupVersion.String(),
				"kind":        v1alpha1.FireboltEngineClassKind,
				"resourceRef": map[string]any{"name": class},
			},
			"reason":         fmt.Sprintf("%s %q uses this %s", v1alpha1.FireboltEngineKind, engine, v1alpha1.FireboltEngineClassKind),
			"replayDeletion": true,
		},
	})
	return u
}
