package class

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// SpecResourceName is the composition resource name of the ConfigMap that
// publishes the class's spec.
const SpecResourceName resource.Name = "spec-configmap"

// specFields are the JSON names of FireboltEngineClassSpec's fields: what
// the ConfigMap publishes of the composite's spec. Crossplane's own fields
// there (resourceRefs, claimRef, compositionRef, ...) are left out; they
// change when the class composes, not when its spec does.
var specFields = func() map[string]bool {
	t := reflect.TypeFor[v1alpha1.FireboltEngineClassSpec]()
	out := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}()

// SpecConfigMap renders the ConfigMap through which engines read the
// class's spec (contract.ClassSpecConfigMap). It holds the spec verbatim,
// admissible or not, as engines read the claim's spec before: each engine
// validates the class template itself and names the class when it rejects
// it. The ConfigMap changes only when the spec does, so a bind (a status
// change of the class) calls no engine again. Its size is bounded by the
// class spec the API server admitted: the spec's own fields, as JSON.
func SpecConfigMap(namespace, class string, spec map[string]any) (map[string]any, error) {
	published := make(map[string]any, len(specFields))
	for k, v := range spec {
		if specFields[k] {
			published[k] = v
		}
	}
	// encoding/json sorts map keys: the same spec is the same string on
	// every call.
	b, err := json.Marshal(published)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      contract.ClassSpecConfigMap(class),
			"namespace": namespace,
			"labels":    map[string]any{contract.LabelEngineClass: class},
		},
		"data": map[string]any{contract.ClassSpecKey: string(b)},
	}, nil
}
