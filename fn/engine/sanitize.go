package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sanitized reproduces an observed object that has no recorded rendering
// (a status from before renderings were recorded, or one that lost them):
// the observed object minus status and the metadata the API server and
// Crossplane own, so returning it keeps the live object as it is.
func sanitized(obs *unstructured.Unstructured) map[string]any {
	o := deepCopy(obs.Object)
	delete(o, "status")
	md, _ := o["metadata"].(map[string]any)
	keep := map[string]any{}
	for _, k := range []string{"name", "namespace", "labels", "annotations"} {
		if v, ok := md[k]; ok {
			keep[k] = v
		}
	}
	if a, ok := keep["annotations"].(map[string]any); ok {
		delete(a, annotationLastAppliedKubectl)
		if len(a) == 0 {
			delete(keep, "annotations")
		}
	}
	o["metadata"] = keep
	return o
}
