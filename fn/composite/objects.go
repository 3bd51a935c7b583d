package composite

import (
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
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

// ToDesired turns a typed object into the minimal unstructured content
// Crossplane should apply: no status (the API server's), no nulls (a zero
// creationTimestamp), no empty noise objects.
func ToDesired(obj any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot encode %T", obj)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, errors.Wrapf(err, "cannot decode %T", obj)
	}
	delete(m, "status")
	prune(m)
	return m, nil
}

// prune removes nulls and empty noise objects, depth first, so an object
// that only held noise goes too.
func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if c == nil {
				delete(t, k)
				continue
			}
			prune(c)
			if cm, ok := c.(map[string]any); ok && len(cm) == 0 && noiseKeys[k] {
				delete(t, k)
			}
		}
	case []any:
		for _, c := range t {
			prune(c)
		}
	}
}

// keptMetadata is the metadata a returned observed object keeps: what the
// function owns. Everything else is the API server's or Crossplane's, and
// returning it would be refused or would fight them.
var keptMetadata = []string{"name", "namespace", "labels", "annotations"}

// ForeignMetadata is a metadata field of obj that the function does not
// own (keptMetadata), in a sorted order; "" when there is none. A
// recording replayed from a status must set no other: owner references
// or finalizers there would be applied by Crossplane.
func ForeignMetadata(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	var foreign []string
	for k := range md {
		if !slices.Contains(keptMetadata, k) {
			foreign = append(foreign, k)
		}
	}
	if len(foreign) == 0 {
		return ""
	}
	slices.Sort(foreign)
	return foreign[0]
}

// annotationLastAppliedKubectl is kubectl's copy of what it last applied;
// the function never owns it.
const annotationLastAppliedKubectl = "kubectl.kubernetes.io/last-applied-configuration"

// Unchanged returns an observed object as desired state that changes
// nothing: its spec and data as they are, without status and without the
// metadata the API server and Crossplane own. The observed object is not
// modified.
func Unchanged(observed map[string]any) map[string]any {
	o := runtime.DeepCopyJSON(observed)
	delete(o, "status")
	md, _ := o["metadata"].(map[string]any)
	keep := map[string]any{}
	for _, k := range keptMetadata {
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

// KeepObserved returns every observed composed resource Unchanged and
// ready: what a composer that cannot decide anything returns, because a
// composed resource left out of the desired state is deleted.
func KeepObserved[T interface{ UnstructuredContent() map[string]any }](observed map[resource.Name]T) map[resource.Name]Desired {
	out := make(map[resource.Name]Desired, len(observed))
	for name, o := range observed {
		out[name] = Desired{Object: Unchanged(o.UnstructuredContent()), Ready: true}
	}
	return out
}
