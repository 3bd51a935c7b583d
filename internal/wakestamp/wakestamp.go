// Package wakestamp is the wake request as the composition function reads
// it: the firebolt.io/wake-requested annotation on a FireboltEngine claim,
// set to the RFC 3339 UTC time of the demand. The gateway's wake agent and
// `kubectl firebolt engine wake` both stamp through it, so the two can
// never write a value the function would ignore.
package wakestamp

import (
	"context"
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
)

// EngineResource is the FireboltEngine claim the wake stamp goes on.
var EngineResource = schema.GroupVersionResource{Group: "compute.firebolt.io", Version: "v1alpha1", Resource: "fireboltengines"}

// Value is the annotation's value for a demand at at: RFC 3339 in UTC, to
// the second, the form the function parses.
func Value(at time.Time) string {
	return at.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// Patch is the JSON merge patch setting the wake annotation to Value(at).
func Patch(at time.Time) ([]byte, error) {
	return json.Marshal(map[string]any{
		"metadata": map[string]any{
			"annotations": map[string]string{autostop.WakeAnnotation: Value(at)},
		},
	})
}

// ClaimStamper stamps the wake annotation on the engine's claim in one
// namespace, with a JSON merge patch: it touches only that annotation, so
// needs no read first and never conflicts with another writer.
type ClaimStamper struct {
	Client    dynamic.Interface
	Namespace string
}

// Stamp patches engine's claim with the wake annotation set to at.
func (s ClaimStamper) Stamp(ctx context.Context, engine string, at time.Time) error {
	body, err := Patch(at)
	if err != nil {
		return err
	}
	_, err = s.Client.Resource(EngineResource).Namespace(s.Namespace).Patch(ctx, engine, types.MergePatchType, body, metav1.PatchOptions{})
	return err
}
