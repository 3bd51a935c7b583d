package engine

import (
	"encoding/json"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
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

// emptyMeaningless are keys whose empty object carries no intent; typed
// objects emit them because encoding/json cannot omit an empty struct.
var emptyMeaningless = map[string]bool{"resources": true, "updateStrategy": true, "status": true}

// toUnstructured converts a typed object to the JSON value Crossplane
// applies. Typed objects serialise a zero creationTimestamp as null and
// empty structs as {}; both would become fields this function owns, so
// they are dropped. An empty emptyDir is kept: there it is the volume.
func toUnstructured(obj any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		panic("engine: cannot encode rendered object: " + err.Error())
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic("engine: cannot decode rendered object: " + err.Error())
	}
	// Status is the API server's; a typed object always carries one.
	delete(m, "status")
	prune(m)
	return m
}

func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if c == nil {
				delete(t, k)
				continue
			}
			prune(c)
			if cm, ok := c.(map[string]any); ok && len(cm) == 0 && emptyMeaningless[k] {
				delete(t, k)
			}
		}
	case []any:
		for _, c := range t {
			prune(c)
		}
	}
}
