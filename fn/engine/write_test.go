package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// TestWriteKeepsEarlierSteps: desired state an earlier pipeline step set
// survives; this step's keys are added over it.
func TestWriteKeepsEarlierSteps(t *testing.T) {
	req := &fnv1.RunFunctionRequest{Desired: &fnv1.State{
		Composite: &fnv1.Resource{Resource: mustStruct(t, map[string]any{"status": map[string]any{"other": "kept"}})},
		Resources: map[string]*fnv1.Resource{"other": {Resource: mustStruct(t, map[string]any{"kind": "ConfigMap"})}},
	}}
	rsp := response.To(req, response.DefaultTTL)
	p := Plan{
		Status:    v1alpha1.FireboltEngineStatus{Phase: "stable", CurrentGeneration: 0, ActiveGeneration: 0},
		Resources: map[resource.Name]DesiredObject{"service": {Object: map[string]any{"kind": "Service"}, Ready: true}},
		Ready:     true,
		Results:   []Result{{Severity: SeverityWarning, Reason: "R", Message: "m"}},
		TTL:       3 * time.Second,
	}
	if err := Write(req, rsp, p); err != nil {
		t.Fatal(err)
	}
	want := &fnv1.RunFunctionResponse{
		Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(3 * time.Second)},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{
				Resource: mustStruct(t, map[string]any{"status": map[string]any{"other": "kept", "phase": "stable", "currentGeneration": 0, "activeGeneration": 0, "observedGeneration": 0}}),
				Ready:    fnv1.Ready_READY_TRUE,
			},
			Resources: map[string]*fnv1.Resource{
				"other":   {Resource: mustStruct(t, map[string]any{"kind": "ConfigMap"})},
				"service": {Resource: mustStruct(t, map[string]any{"kind": "Service"}), Ready: fnv1.Ready_READY_TRUE},
			},
		},
		Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_WARNING, Message: "m", Reason: ptrTo("R"), Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}},
	}
	if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
		t.Errorf("Write: -want, +got:\n%s", diff)
	}
}
