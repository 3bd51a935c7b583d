package wakeagent

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

// Stamper asks for an engine to be woken.
type Stamper interface {
	Stamp(ctx context.Context, engine string, at time.Time) error
}

// EngineResource is the FireboltEngine claim the wake stamp goes on.
var EngineResource = schema.GroupVersionResource{Group: "compute.firebolt.io", Version: "v1alpha1", Resource: "fireboltengines"}

// ClaimStamper stamps the wake annotation on the engine's claim in one
// namespace, with a JSON merge patch: it touches only that annotation, so
// needs no read first and never conflicts with another writer.
type ClaimStamper struct {
	Client    dynamic.Interface
	Namespace string
}

// Stamp patches engine's claim with the wake annotation set to at.
func (s ClaimStamper) Stamp(ctx context.Context, engine string, at time.Time) error {
	body, err := stampPatch(at)
	if err != nil {
		return err
	}
	_, err = s.Client.Resource(EngineResource).Namespace(s.Namespace).Patch(ctx, engine, types.MergePatchType, body, metav1.PatchOptions{})
	return err
}

// stampPatch is the merge patch setting the wake annotation to at, in RFC
// 3339 UTC to the second, the form the function parses.
func stampPatch(at time.Time) ([]byte, error) {
	return json.Marshal(map[string]any{
		"metadata": map[string]any{
			"annotations": map[string]string{autostop.WakeAnnotation: at.UTC().Truncate(time.Second).Format(time.RFC3339)},
		},
	})
}
