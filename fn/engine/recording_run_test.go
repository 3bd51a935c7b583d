package engine_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// storedDoc mirrors the recorded document, as anyone who can write the
// composite's status can produce it.
type storedDoc struct {
	Version int `json:"version"`
	Objects struct {
		ConfigMap   map[string]any `json:"configMap"`
		Headless    map[string]any `json:"headless"`
		StatefulSet map[string]any `json:"statefulSet"`
	} `json:"objects"`
}

func gz(t *testing.T, r io.Reader) string {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := io.Copy(zw, r); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// storedRecording returns the stable request's recording of generation 0.
func storedRecording(t *testing.T, req *fnv1.RunFunctionRequest) (*structpb.Struct, storedDoc) {
	t.Helper()
	st := req.GetObserved().GetComposite().GetResource().GetFields()["status"].GetStructValue()
	r := st.GetFields()["renderings"].GetListValue().GetValues()[0].GetStructValue()
	z, err := base64.StdEncoding.DecodeString(r.GetFields()["objects"].GetStringValue())
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	var doc storedDoc
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if got, want := podtemplate.ContentHash(doc), r.GetFields()["hash"].GetStringValue(); got != want {
		t.Fatalf("the test's mirror of the recording hashes to %s, the function's to %s", got, want)
	}
	return r, doc
}

// store writes doc back into the recording with a hash that matches it, as
// a careful forger would.
func store(t *testing.T, r *structpb.Struct, doc storedDoc) {
	t.Helper()
	b, _ := json.Marshal(doc)
	r.Fields["objects"] = structpb.NewStringValue(gz(t, bytes.NewReader(b)))
	r.Fields["hash"] = structpb.NewStringValue(podtemplate.ContentHash(doc))
}

// TestRunFunctionRejectsTamperedRecordings: an object replayed from
// status.renderings must be what its generation would have been. A forged
// or corrupted recording is not replayed: the live objects are kept as
// observed, the recording leaves the status, and RenderingsVerified says
// which generation and why.
func TestRunFunctionRejectsTamperedRecordings(t *testing.T) {
	crb := map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "demo-g0", "labels": map[string]any{"firebolt.io/engine": "demo", "firebolt.io/generation": "0"}},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "default", "namespace": "firebolt"}},
	}
	cases := map[string]struct {
		tamper func(t *testing.T, r *structpb.Struct, doc storedDoc)
		// why is part of the condition's message.
		why string
	}{
		"WrongKind": {
			tamper: func(t *testing.T, r *structpb.Struct, doc storedDoc) { doc.Objects.StatefulSet = crb; store(t, r, doc) },
			why:    "is rbac.authorization.k8s.io/v1 ClusterRoleBinding, want apps/v1 StatefulSet",
		},
		"WrongName": {
			tamper: func(t *testing.T, r *structpb.Struct, doc storedDoc) {
				doc.Objects.StatefulSet["metadata"].(map[string]any)["name"] = "payroll"
				store(t, r, doc)
			},
			why: "is firebolt/payroll, want firebolt/demo-g0",
		},
		"WrongNamespace": {
			tamper: func(t *testing.T, r *structpb.Struct, doc storedDoc) {
				doc.Objects.ConfigMap["metadata"].(map[string]any)["namespace"] = "kube-system"
				store(t, r, doc)
			},
			why: "is kube-system/demo-g0-config, want firebolt/demo-g0-config",
		},
		"ForeignLabels": {
			tamper: func(t *testing.T, r *structpb.Struct, doc storedDoc) {
				doc.Objects.Headless["metadata"].(map[string]any)["labels"] = map[string]any{"firebolt.io/engine": "other", "firebolt.io/generation": "0"}
				store(t, r, doc)
			},
			why: "headless object: has labels",
		},
		"ForeignSelector": {
			tamper: func(t *testing.T, r *structpb.Struct, doc storedDoc) {
				sel := doc.Objects.StatefulSet["spec"].(map[string]any)["selector"].(map[string]any)
				sel["matchLabels"] = map[string]any{"app": "payroll"}
				store(t, r, doc)
			},
			why: "statefulset selector",
		},
		"HashMismatch": {
			tamper: func(t *testing.T, r *structpb.Struct, doc storedDoc) {
				doc.Objects.StatefulSet["spec"].(map[string]any)["replicas"] = float64(40)
				h := r.Fields["hash"].GetStringValue()
				store(t, r, doc)
				r.Fields["hash"] = structpb.NewStringValue(h)
			},
			why: "does not match its content",
		},
		"GzipBomb": {
			tamper: func(t *testing.T, r *structpb.Struct, _ storedDoc) {
				r.Fields["objects"] = structpb.NewStringValue(gz(t, io.LimitReader(zeros{}, 64<<20)))
			},
			why: "decompressed rendering exceeds",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := loadRequest(t, "stable")
			r, doc := storedRecording(t, req)
			tc.tamper(t, r, doc)
			tampered := r.GetFields()["hash"].GetStringValue()

			rsp, alloc := runMeasured(t, req)

			c := condition(rsp, engine.TypeRenderingsVerified)
			if c == nil || c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != engine.ReasonRecordingRejected {
				t.Errorf("want RenderingsVerified False/RecordingRejected, got %v", c)
			}
			if !strings.Contains(c.GetMessage(), "generation 0:") || !strings.Contains(c.GetMessage(), tc.why) || len(c.GetMessage()) > 1024 {
				t.Errorf("condition message should name generation 0 and %q within 1 KiB, got (%d bytes) %q", tc.why, len(c.GetMessage()), c.GetMessage())
			}
			if !hasResult(rsp, engine.ReasonRecordingRejected) {
				t.Errorf("want a RecordingRejected event")
			}
			// Nothing from the recording is applied: every desired
			// generation-0 object is the live one, as observed.
			for _, n := range []string{"g0-config", "g0-headless", "g0-statefulset"} {
				got := rsp.GetDesired().GetResources()[n].GetResource().AsMap()
				obs := req.GetObserved().GetResources()[n].GetResource().AsMap()
				for _, k := range []string{"apiVersion", "kind"} {
					if got[k] != obs[k] {
						t.Errorf("%s: desired %s %v, observed %v", n, k, got[k], obs[k])
					}
				}
				if diff := cmp.Diff(obs["spec"], got["spec"]); n != "g0-config" && diff != "" {
					t.Errorf("%s: desired spec is not the observed one: -observed, +desired:\n%s", n, diff)
				}
			}
			for n, d := range rsp.GetDesired().GetResources() {
				if k := d.GetResource().AsMap()["kind"]; k != "ConfigMap" && k != "Service" && k != "StatefulSet" && k != "Usage" {
					t.Errorf("desired %s is a %v", n, k)
				}
			}
			for _, v := range rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()["renderings"].GetListValue().GetValues() {
				if v.GetStructValue().GetFields()["hash"].GetStringValue() == tampered {
					t.Errorf("the rejected recording was written back to status")
				}
			}
			// The call itself allocates ~2 MiB; a bomb adds at most what
			// reading up to the 4 MiB decompression bound takes.
			t.Logf("RunFunction allocated %d KiB", alloc>>10)
			if alloc > 20<<20 {
				t.Errorf("RunFunction allocated %d MiB", alloc>>20)
			}
		})
	}
}

// TestRunFunctionReplaysAnHonestRecording: the recording the function wrote
// is replayed as it is, and no RenderingsVerified condition is reported.
func TestRunFunctionReplaysAnHonestRecording(t *testing.T) {
	req := loadRequest(t, "stable")
	_, doc := storedRecording(t, req)
	rsp, _ := runMeasured(t, req)
	if c := condition(rsp, engine.TypeRenderingsVerified); c != nil {
		t.Errorf("want no RenderingsVerified condition, got %v", c)
	}
	if diff := cmp.Diff(doc.Objects.StatefulSet, rsp.GetDesired().GetResources()["g0-statefulset"].GetResource().AsMap()); diff != "" {
		t.Errorf("g0-statefulset is not its recording: -recorded, +desired:\n%s", diff)
	}
}

// TestRenderingsVerifiedClearsOnceEveryGenerationIsRecorded: once the
// rejected recording is gone and every generation is reproduced from a
// recording again, the condition turns True.
func TestRenderingsVerifiedClearsOnceEveryGenerationIsRecorded(t *testing.T) {
	req := loadRequest(t, "stable")
	st := req.GetObserved().GetComposite().GetResource().GetFields()["status"].GetStructValue()
	st.Fields["conditions"] = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
		"type": structpb.NewStringValue(engine.TypeRenderingsVerified), "status": structpb.NewStringValue("False"),
		"reason": structpb.NewStringValue(engine.ReasonRecordingRejected), "message": structpb.NewStringValue("rejected the recorded rendering of generation 0: ..."),
	}})}})
	rsp, _ := runMeasured(t, req)
	c := condition(rsp, engine.TypeRenderingsVerified)
	if c == nil || c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
		t.Errorf("want RenderingsVerified True, got %v", c)
	}
	if hasResult(rsp, engine.ReasonRecordingRejected) {
		t.Errorf("want no RecordingRejected event")
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// runMeasured runs the engine function and reports the bytes it allocated.
func runMeasured(t *testing.T, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, uint64) {
	t.Helper()
	c := engine.New(&fixedProber{}, fixedEvents{}, engine.WithClock(func() time.Time { return responseClock }))
	f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rsp, err := f.RunFunction(context.Background(), req)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("fatal result: %s", r.GetMessage())
		}
	}
	return rsp, after.TotalAlloc - before.TotalAlloc
}

func condition(rsp *fnv1.RunFunctionResponse, typ string) *fnv1.Condition {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return c
		}
	}
	return nil
}

func hasResult(rsp *fnv1.RunFunctionResponse, reason string) bool {
	for _, r := range rsp.GetResults() {
		if r.GetReason() == reason {
			return true
		}
	}
	return false
}
