package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Deletion protection is Crossplane's own: every engine that names a class
// composes a namespaced Usage of the class's claim. Crossplane's Usage
// controller then labels the claim crossplane.io/in-use, and its
// crossplane-no-usages webhook refuses to delete a labelled object while a
// Usage of it exists, answering 409 Conflict with
//
//	This resource is in-use by 2 usage(s), including the *v1beta1.Usage
//	"e1-engineclass-fe6d3468" (in namespace "firebolt") with reason:
//	"FireboltEngine \"e1\" uses this FireboltEngineClass (bound engines: \"e1\", \"e2\")".
//
// The webhook quotes only one Usage, picked arbitrarily, so every Usage
// carries the class's list of bound engines (status.boundEngineNames, as the
// engine last read it) and the refusal names them all.
//
// When the engine stops naming the class, names another one, or is deleted,
// its Usage leaves the desired state and Crossplane deletes it; once no Usage
// is left the deletion goes through. Each class an engine uses has its own
// resource-name and object name, so switching classes deletes the old Usage
// (and with it the old class's in-use label) rather than re-pointing it.

// Usage API, as Crossplane v2 serves it.
const (
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	UsageKind       = "Usage"
)

// usageResourcePrefix starts the composition resource name of an engine's
// Usage of a class.
const usageResourcePrefix = "engineclass-usage-"

// UsageResourceName is the composition resource name under which an engine
// composes the Usage of class.
func UsageResourceName(class string) resource.Name {
	return resource.Name(usageResourcePrefix + class)
}

// IsUsageResourceName tells whether a composition resource name is one of an
// engine's class Usages.
func IsUsageResourceName(n resource.Name) bool {
	return strings.HasPrefix(string(n), usageResourcePrefix)
}

// LabelEngineClass on the Usage, beside LabelEngine, finds a class's
// users.
const LabelEngineClass = contract.LabelEngineClass

// UsageName is the name of the Usage engine composes for class: unique per
// engine and class in a namespace (the hash has no dashes, so no two pairs
// share a name) and within Kubernetes' name length for any class name.
func UsageName(engine, class string) string {
	h := sha256.Sum256([]byte(class))
	return engine + "-engineclass-" + hex.EncodeToString(h[:4])
}

// Usage renders the Usage an engine composes for the class it uses: the
// FireboltEngineClass claim class, in the engine's namespace, held by the
// FireboltEngine claim engine. The reason names the engine and the class's
// bound engines, so the refusal of a deletion does.
//
// replayDeletion is off: a deletion that was refused stays refused. Replaying
// it would delete the class silently whenever its last engine moves away,
// perhaps months after the kubectl delete that nobody remembers.
func Usage(namespace, engine, class string, bound []string) *composed.Unstructured {
	u := composed.New()
	u.SetUnstructuredContent(map[string]any{
		"apiVersion": UsageAPIVersion,
		"kind":       UsageKind,
		"metadata": map[string]any{
			"name":      UsageName(engine, class),
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
			"reason":         UsageReason(engine, bound),
			"replayDeletion": false,
		},
	})
	return u
}

// maxNamedEngines bounds the engines a Usage reason names; a refusal that
// lists hundreds helps nobody, the class's status has them all.
const maxNamedEngines = 10

// UsageReason says that engine uses the class and names the engines bound
// to it (engine among them, whether or not the list has caught up yet).
func UsageReason(engine string, bound []string) string {
	r := fmt.Sprintf("%s %q uses this %s", v1alpha1.FireboltEngineKind, engine, v1alpha1.FireboltEngineClassKind)
	names := slices.Clone(bound)
	if !slices.Contains(names, engine) {
		names = append(names, engine)
	}
	if len(names) == 1 {
		return r
	}
	slices.Sort(names)
	quoted := make([]string, 0, maxNamedEngines)
	for _, n := range names[:min(len(names), maxNamedEngines)] {
		quoted = append(quoted, strconv.Quote(n))
	}
	list := strings.Join(quoted, ", ")
	if more := len(names) - maxNamedEngines; more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return r + " (bound engines: " + list + ")"
}

// classUsage is the Usage that stops the engine's class from being deleted
// while the engine names it. It is composed once the class exists (a Usage
// of a missing object cannot become ready) and kept while it is observed, so
// a call whose requirements are not resolved yet does not drop it. The
// first call writes only the status intent, like every other object. The
// Usage of a class the engine no longer names is left out, so Crossplane
// deletes it.
func classUsage(in Inputs) (resource.Name, DesiredObject, bool) {
	name := UsageResourceName(in.Class.Name)
	obs := in.Observed[name]
	if in.Class.Name == "" || in.Status.Phase == "" || (!in.Class.Found && obs == nil) {
		return "", DesiredObject{}, false
	}
	u := Usage(in.Namespace, in.Engine, in.Class.Name, in.Class.BoundEngines)
	if !in.Class.Found {
		// The class's list is not known on this call: keep the reason the
		// Usage has rather than rewrite it to name this engine alone.
		if r, ok := obs.str("spec", "reason"); ok {
			_ = unstructured.SetNestedField(u.Object, r, "spec", "reason")
		}
	}
	return name, DesiredObject{Object: u.Object, Ready: obs != nil}, true
}
