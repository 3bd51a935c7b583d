package composite

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

type testStatus struct {
	Phase string `json:"phase,omitempty"`
	Count int    `json:"count"`
}

// TestWriteStatus: the composer's status replaces the fields it owns (even
// one it now leaves out) and keeps what an earlier pipeline step wrote.
func TestWriteStatus(t *testing.T) {
	req := &fnv1.RunFunctionRequest{Desired: &fnv1.State{Composite: &fnv1.Resource{
		Resource: resource.MustStructJSON(`{"status": {"phase": "old", "count": 3, "other": "kept"}}`),
	}}}
	rsp := &fnv1.RunFunctionResponse{}
	if err := Write(req, rsp, Response[testStatus]{Status: testStatus{Count: 1}}); err != nil {
		t.Fatal(err)
	}
	got := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
	want := map[string]any{"count": float64(1), "other": "kept"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("desired status: -want, +got:\n%s", diff)
	}
}
