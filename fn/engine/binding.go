package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// An engine that names a class composes a small ConfigMap in its namespace,
// its binding, labelled with the class and the engine. The class requires
// the bindings labelled with its name: it counts and names its engines by
// them (status.boundEngines, boundEngineNames), and while there is one it
// composes the Usage that refuses its claim's deletion (class.InUse).
//
// A ConfigMap has no status and no controller of its own, so a binding is
// one watch event of its engine (and of its class) when it is created and
// none after. It used to be a Usage per engine: Crossplane's Usage
// controller then added a finalizer, an annotation and a status to it (four
// more events of the engine, each a whole reconcile) and PUT the class's
// claim on every pass, a minute apart at its default poll interval.
//
// When the engine stops naming the class, names another one, or is deleted,
// the binding leaves the desired state and Crossplane deletes it; the class
// then counts one engine fewer and, at none, drops its Usage. Each class an
// engine names has its own resource name and object name, so switching
// classes deletes the old binding rather than re-pointing it.

// bindingResourcePrefix starts the composition resource name of an engine's
// binding to a class.
const bindingResourcePrefix = "engineclass-binding-"

// BindingResourceName is the composition resource name under which an
// engine composes its binding to class.
func BindingResourceName(class string) resource.Name {
	return resource.Name(bindingResourcePrefix + class)
}

// IsBindingResourceName tells whether a composition resource name is one of
// an engine's class bindings.
func IsBindingResourceName(n resource.Name) bool {
	return strings.HasPrefix(string(n), bindingResourcePrefix)
}

// BindingName is the name of the ConfigMap binding engine to class: unique
// per engine and class in a namespace (the hash has no dashes, so no two
// pairs share a name) and within Kubernetes' name length for any class name.
func BindingName(engine, class string) string {
	h := sha256.Sum256([]byte(class))
	return engine + "-engineclass-" + hex.EncodeToString(h[:4])
}

// Binding renders the ConfigMap that binds engine to class in namespace.
// Its labels are what the class selects and counts; its data says the same
// for a reader of the object.
func Binding(namespace, engine, class string) *composed.Unstructured {
	u := composed.New()
	u.SetUnstructuredContent(map[string]any{
		"apiVersion": "v1",
		"kind":       kindConfigMap,
		"metadata": map[string]any{
			"name":      BindingName(engine, class),
			"namespace": namespace,
			"labels": map[string]any{
				contract.LabelEngine:             engine,
				contract.LabelEngineClassBinding: class,
			},
		},
		"data": map[string]any{"engine": engine, "engineClass": class},
	})
	return u
}

// classBinding is the engine's binding to the class it names, whether or
// not the class exists yet (the original counts every engine that names a
// class). The first call writes only the status intent, like every other
// object. A binding to a class the engine no longer names is left out, so
// Crossplane deletes it. A ConfigMap is ready once it exists, which is
// when Crossplane has applied it: always ready, so Crossplane records no
// "not yet ready" event for it.
func classBinding(in Inputs) (resource.Name, DesiredObject, bool) {
	if in.Class.Name == "" || in.Status.Phase == "" {
		return "", DesiredObject{}, false
	}
	return BindingResourceName(in.Class.Name), DesiredObject{Object: Binding(in.Namespace, in.Engine, in.Class.Name).Object, Ready: true}, true
}
