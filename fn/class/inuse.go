package class

import (
	"fmt"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Deletion protection is Crossplane's own: while any engine is bound to the
// class, the class composes one namespaced Usage of its own claim.
// Crossplane's Usage controller then labels the claim crossplane.io/in-use,
// and its crossplane-no-usages webhook refuses to delete a labelled object
// while a Usage of it exists, answering 409 Conflict with
//
//	This resource is in-use by 1 usage(s), including the *v1beta1.Usage
//	"standard-engineclass-in-use" (in namespace "firebolt") with reason:
//	"FireboltEngineClass \"standard\" has engines bound to it; its
//	status.boundEngineNames lists them".
//
// The reason names no engine, so it never changes as engines bind and
// unbind: a Usage that changed would be one more pass of Crossplane's Usage
// controller (and a PUT of the claim) per bind. Once the last engine's
// binding is gone the Usage leaves the desired state, Crossplane deletes
// it, and the deletion goes through.
//
// replayDeletion is off: a deletion that was refused stays refused.
// Replaying it would delete the class silently whenever its last engine
// moves away, perhaps months after the kubectl delete that nobody
// remembers.

// InUseResourceName is the composition resource name of the class's Usage
// of its claim.
const InUseResourceName = resource.Name("in-use")

// InUseName is the name of the Usage of class's claim, unique per class in
// a namespace (claim names are at most 63 characters, so it always fits).
func InUseName(class string) string { return class + "-engineclass-in-use" }

// InUseReason says that class has engines and where they are listed.
func InUseReason(class string) string {
	return fmt.Sprintf("%s %q has engines bound to it; its status.boundEngineNames lists them", v1alpha1.FireboltEngineClassKind, class)
}

// InUse renders the Usage of class's claim in namespace.
func InUse(namespace, class string) map[string]any {
	return map[string]any{
		"apiVersion": contract.UsageAPIVersion,
		"kind":       contract.UsageKind,
		"metadata": map[string]any{
			"name":      InUseName(class),
			"namespace": namespace,
		},
		"spec": map[string]any{
			"of": map[string]any{
				"apiVersion":  v1alpha1.SchemeGroupVersion.String(),
				"kind":        v1alpha1.FireboltEngineClassKind,
				"resourceRef": map[string]any{"name": class},
			},
			"reason":         InUseReason(class),
			"replayDeletion": false,
		},
	}
}
