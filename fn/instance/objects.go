package instance

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// noiseKeys are fields that Go's encoding of the Kubernetes types writes as
// empty objects although nothing was set (struct fields without omitzero).
// Crossplane applies desired state as fully specified intent, so an empty
// object would make it own a field it never meant to; they are dropped. Empty
// objects under any other key (emptyDir: {}, a selector matching everything)
// mean something and are kept.
var noiseKeys = map[string]bool{
	"metadata":       true,
	"resources":      true,
	"status":         true,
	"strategy":       true,
	"updateStrategy": true,
}

// toComposed turns a typed object into the minimal unstructured object
// Crossplane should apply: no status, no nulls, no empty noise objects.
func toComposed(o runtime.Object) (*composed.Unstructured, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot encode %T", o)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, errors.Wrapf(err, "cannot decode %T", o)
	}
	delete(m, "status")
	prune(m)
	u := composed.New()
	u.SetUnstructuredContent(m)
	return u, nil
}

// prune removes nulls and empty noise objects from m, depth first, so an
// object that only held noise goes too.
func prune(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			prune(x)
			if len(x) == 0 && noiseKeys[k] {
				delete(m, k)
			}
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
}

// serverFields are the metadata fields the API server or Crossplane set on
// a live object; returning them would be refused or would fight Crossplane.
var serverFields = []string{
	"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "managedFields", "ownerReferences", "selfLink", "finalizers",
}

// frozen returns an observed object as desired state that changes nothing:
// its spec and data as they are, without status and server-set metadata. A
// component whose spec cannot be rendered (a rejected template, a missing
// credentials Secret) is returned this way, because a composed resource left
// out of the desired state is deleted and a user's typo must not take down a
// running service.
func frozen(observed *composed.Unstructured) *composed.Unstructured {
	m := runtime.DeepCopyJSON(observed.UnstructuredContent())
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, f := range serverFields {
			delete(md, f)
		}
	}
	u := composed.New()
	u.SetUnstructuredContent(m)
	return u
}
