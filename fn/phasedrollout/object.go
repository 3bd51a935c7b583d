package phasedrollout

import (
	stsplus "github.com/firebolt-db/firebolt-crossplane/apis/stsplus/v1alpha1"
)

// The provider-kubernetes Object API the composition targets: cluster
// scoped kubernetes.crossplane.io/v1alpha2, served by v0.17 and by every
// v1.x release alike.
const (
	ObjectAPIVersion = "kubernetes.crossplane.io/v1alpha2"
	ObjectKind       = "Object"
)

// FieldManager is the field manager provider-kubernetes applies an Object's
// manifest with (server-side apply, forced), so the one that owns the
// target's partition on this claim's behalf.
func FieldManager(object string) string { return "provider-kubernetes/" + object }

// renderObject is the Object that sets target's partition: it may observe
// and update the StatefulSet, never create or delete it, and its manifest
// holds only the StatefulSet's identity, the marker annotation naming
// claim, and the partition, so its field manager owns those and nothing
// else of a StatefulSet someone else applies.
func renderObject(name, providerConfig, claim, namespace, target string, partition int32) map[string]any {
	return map[string]any{
		"apiVersion": ObjectAPIVersion,
		"kind":       ObjectKind,
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"managementPolicies": []any{"Observe", "Update"},
			"providerConfigRef":  map[string]any{"name": providerConfig},
			"forProvider": map[string]any{
				"manifest": map[string]any{
					"apiVersion": "apps/v1",
					"kind":       "StatefulSet",
					"metadata": map[string]any{
						"name":        target,
						"namespace":   namespace,
						"annotations": map[string]any{stsplus.AnnotationManagedBy: claim},
					},
					"spec": map[string]any{
						"updateStrategy": map[string]any{
							"rollingUpdate": map[string]any{"partition": int64(partition)},
						},
					},
				},
			},
		},
	}
}
