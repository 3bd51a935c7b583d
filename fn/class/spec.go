package class

import (
	"encoding/json"
	"fmt"
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
// the ConfigMap publishes of the composite's spec.
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

// maxPublishedBytes is the most a ConfigMap holds: the API server refuses
// one whose data keys and values add up to more than 1 MiB.
const maxPublishedBytes = 1<<20 - len(contract.ClassSpecKey)

// Published is what the ConfigMap publishes: the spec as JSON, or why it
// cannot be published (then Spec is empty).
type Published struct {
	Spec string
	Err  string
}

// PublishSpec encodes the spec's own fields verbatim, as the composite
// holds them: a quantity keeps its spelling, so engines render exactly what
// they rendered from the claim. Crossplane's own fields there
// (resourceRefs, claimRef, compositionRef, ...) are left out; they change
// when the class composes, not when its spec does. The spec was admitted
// by the API server (at most etcd's 1.5 MiB an object), so the encoding is
// bounded before it is made; one longer than a ConfigMap holds is not
// published, and says so.
func PublishSpec(spec map[string]any) Published {
	own := make(map[string]any, len(specFields))
	for k, v := range spec {
		if specFields[k] {
			own[k] = v
		}
	}
	// encoding/json sorts map keys: the same spec is the same string on
	// every call.
	b, err := json.Marshal(own)
	switch {
	case err != nil:
		return Published{Err: "cannot encode its spec: " + err.Error()}
	case len(b) > maxPublishedBytes:
		return Published{Err: fmt.Sprintf("spec is %d bytes as JSON, more than the %d a ConfigMap holds", len(b), maxPublishedBytes)}
	}
	return Published{Spec: string(b)}
}

// SpecConfigMap renders the ConfigMap through which engines read the
// class's spec (contract.ClassSpecConfigMap): data.spec, or data.error
// when the spec cannot be published. It holds the spec whether admissible
// or not, as engines read the claim's spec before: each engine validates
// the class template itself and names the class when it rejects it. It
// changes only when the spec does, so a bind (a status change of the
// class) calls no engine again.
func SpecConfigMap(namespace, class string, p Published) map[string]any {
	data := map[string]any{contract.ClassSpecKey: p.Spec}
	if p.Err != "" {
		data = map[string]any{contract.ClassSpecErrorKey: p.Err}
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      contract.ClassSpecConfigMap(class),
			"namespace": namespace,
			"labels":    map[string]any{contract.LabelEngineClass: class},
		},
		"data": data,
	}
}
