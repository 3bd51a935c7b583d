package engine

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

func encodeRaw(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func TestRecordingRoundTrip(t *testing.T) {
	in := testInputs(t, "creating", 3, 2)
	rec := renderFor(in, 3, in.Spec)

	got := decodeRecording(in.Engine, in.Namespace, v1beta1.PodSecurity{}, v1alpha1.GenerationRendering{Generation: 3, Hash: rec.Hash, Objects: rec.Encoded})
	if got.Err != nil {
		t.Fatalf("decodeRecording: %v", got.Err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("decode(record(x)): -want, +got:\n%s", diff)
	}
	again := record(3, got.Objects).encoded()
	if again.Hash != rec.Hash || again.Encoded != rec.Encoded {
		t.Errorf("re-recording decoded objects changed them: hash %s -> %s", rec.Hash, again.Hash)
	}
}

func TestRecordingHashFollowsContent(t *testing.T) {
	in := testInputs(t, "creating", 3, 2)
	a := renderFor(in, 3, in.Spec)
	b := renderFor(in, 4, in.Spec)
	s := in.Spec
	s.Replicas = 3
	c := renderFor(in, 3, s)
	in.Instance.Status.MetadataEndpoint = "elsewhere:7000"
	d := renderFor(in, 3, in.Spec)
	seen := map[string]string{}
	for name, r := range map[string]Recording{"base": a, "other generation": b, "other replicas": c, "other endpoint": d} {
		if prev, dup := seen[r.Hash]; dup {
			t.Errorf("%s and %s hash equal (%s)", prev, name, r.Hash)
		}
		seen[r.Hash] = name
		if len(r.Hash) != 16 {
			t.Errorf("%s: hash %q is not 16 hex digits", name, r.Hash)
		}
	}
}

func TestDecodeRecordingRejectsBadInput(t *testing.T) {
	cases := map[string]string{
		"NotBase64":       "%%%",
		"NotGzip":         base64.StdEncoding.EncodeToString([]byte("plain")),
		"NotJSON":         encodeRaw(t, []byte("{")),
		"UnknownVersion":  encodeRaw(t, []byte(`{"version":2,"objects":{"configMap":{},"headless":{},"statefulSet":{}}}`)),
		"MissingObject":   encodeRaw(t, []byte(`{"version":1,"objects":{"configMap":{},"headless":{}}}`)),
		"TooLarge":        encodeRaw(t, bytes.Repeat([]byte(" "), maxRecordingBytes+1)),
		"EncodedTooLarge": strings.Repeat("A", maxEncodedRecordingBytes+4),
	}
	for name, enc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decodeRecording("demo", "firebolt", v1beta1.PodSecurity{}, v1alpha1.GenerationRendering{Generation: 1, Hash: "h", Objects: enc})
			if got.Err == nil || got.usable() {
				t.Errorf("decodeRecording(%s): want an unusable recording with an error, got err=%v usable=%v", name, got.Err, got.usable())
			}
		})
	}
}

// TestUndecodableRecordingIsNotWrittenBack: a generation whose recording
// cannot be read is reproduced from its sanitised objects and its broken
// recording leaves the status.
func TestUndecodableRecordingIsNotWrittenBack(t *testing.T) {
	in := stableAt(t, 0, baseSpec())
	broken := v1alpha1.GenerationRendering{Generation: 0, Hash: in.Renderings[0].Hash, Objects: "%%%"}
	in.Status.Renderings = []v1alpha1.GenerationRendering{broken}
	in.Renderings = decodeRecordings(in.Engine, in.Namespace, v1beta1.PodSecurity{}, in.Status.Renderings)

	p := Compute(in, Signals{}, testNow)
	want := []v1alpha1.GenerationRendering{{Generation: 1, Hash: renderFor(in, 1, in.Spec).Hash, Objects: renderFor(in, 1, in.Spec).Encoded}}
	if diff := cmp.Diff(want, p.Status.Renderings); diff != "" {
		t.Errorf("renderings: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(composite.Unchanged(in.Observed["g0-statefulset"].m), p.Resources["g0-statefulset"].Object); diff != "" {
		t.Errorf("g0-statefulset should be the sanitised observed object: -want, +got:\n%s", diff)
	}
}

// TestDecodeRecordingsBoundsTheirCount: a status with more renderings than
// a rollout ever records is not trusted, and only as many entries as may be
// recorded are looked at.
func TestDecodeRecordingsBoundsTheirCount(t *testing.T) {
	in := testInputs(t, "creating", 3, 2)
	honest := renderFor(in, 0, in.Spec)
	rs := make([]v1alpha1.GenerationRendering, 1000)
	for i := range rs {
		rs[i] = v1alpha1.GenerationRendering{Generation: i, Hash: honest.Hash, Objects: honest.Encoded}
	}
	got := decodeRecordings(in.Engine, in.Namespace, v1beta1.PodSecurity{}, rs)
	if len(got) != maxRecordings {
		t.Errorf("want %d entries, got %d", maxRecordings, len(got))
	}
	for g, r := range got {
		if r.usable() || r.Err == nil {
			t.Errorf("generation %d: want a rejected recording, got usable=%v err=%v", g, r.usable(), r.Err)
		}
	}
	if ok := decodeRecordings(in.Engine, in.Namespace, v1beta1.PodSecurity{}, rs[:1]); !ok[0].usable() {
		t.Errorf("one honest recording should be usable: %v", ok[0].Err)
	}
}

// TestVerifyRecording: each way a recording can differ from what its
// generation would have been is rejected; the honest one is accepted.
func TestVerifyRecording(t *testing.T) {
	in := testInputs(t, "creating", 3, 2)
	set := func(path ...string) func(GenerationObjects, any) {
		return func(o GenerationObjects, v any) {
			obj := o.bySuffix(path[0])
			if v == nil {
				unstructured.RemoveNestedField(obj, path[1:]...)
				return
			}
			_ = unstructured.SetNestedField(obj, v, path[1:]...)
		}
	}
	cases := map[string]struct {
		mutate func(GenerationObjects, any)
		value  any
	}{
		"OwnerReferences":        {set(suffixStatefulSet, "metadata", "ownerReferences"), []any{map[string]any{"kind": "Namespace", "name": "firebolt"}}},
		"Finalizers":             {set(suffixConfig, "metadata", "finalizers"), []any{"example.com/never"}},
		"ExtraLabel":             {set(suffixConfig, "metadata", "labels", "team"), "payroll"},
		"SelectorExpressions":    {set(suffixStatefulSet, "spec", "selector", "matchExpressions"), []any{map[string]any{"key": "app", "operator": "Exists"}}},
		"PodTemplateGeneration":  {set(suffixStatefulSet, "spec", "template", "metadata", "labels", LabelGeneration), "7"},
		"ServiceName":            {set(suffixStatefulSet, "spec", "serviceName"), "payroll"},
		"HeadlessSelector":       {set(suffixHeadless, "spec", "selector"), map[string]any{"app": "payroll"}},
		"HeadlessIsLoadBalancer": {set(suffixHeadless, "spec", "type"), "LoadBalancer"},
		"HeadlessHasAClusterIP":  {set(suffixHeadless, "spec", "clusterIP"), nil},
		"OtherGeneration":        {set(suffixStatefulSet, "metadata", "name"), "demo-g4"},
		"HostNetwork":            {set(suffixStatefulSet, "spec", "template", "spec", "hostNetwork"), true},
		"NodeName":               {set(suffixStatefulSet, "spec", "template", "spec", "nodeName"), "node-1"},
		"HostPathVolume":         {set(suffixStatefulSet, "spec", "template", "spec", "volumes"), []any{map[string]any{"name": "root", "hostPath": map[string]any{"path": "/"}}}},
		"RunsAsRoot":             {set(suffixStatefulSet, "spec", "template", "spec", "securityContext", "runAsUser"), int64(0)},
		"PrivilegedContainer": {set(suffixStatefulSet, "spec", "template", "spec", "containers"), []any{map[string]any{
			"name": "engine", "image": "example.com/x:1", "securityContext": map[string]any{"privileged": true}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := renderFor(in, 3, in.Spec)
			rec.Objects = GenerationObjects{ConfigMap: deepCopy(rec.Objects.ConfigMap), Headless: deepCopy(rec.Objects.Headless), StatefulSet: deepCopy(rec.Objects.StatefulSet)}
			tc.mutate(rec.Objects, tc.value)
			// A forger recomputes the hash: identity is checked regardless.
			rec.Hash = record(3, rec.Objects).Hash
			if err := verifyRecording(in.Engine, in.Namespace, v1beta1.PodSecurity{}, rec); err == nil {
				t.Errorf("verifyRecording accepted a recording with %s", name)
			}
		})
	}
	honest := renderFor(in, 3, in.Spec)
	if err := verifyRecording(in.Engine, in.Namespace, v1beta1.PodSecurity{}, honest); err != nil {
		t.Errorf("honest recording rejected: %v", err)
	}
	if err := verifyRecording("other", in.Namespace, v1beta1.PodSecurity{}, honest); err == nil {
		t.Errorf("another engine's recording accepted")
	}
	if err := verifyRecording(in.Engine, in.Namespace, v1beta1.PodSecurity{}, Recording{Generation: 4, Hash: honest.Hash, Objects: honest.Objects}); err == nil {
		t.Errorf("generation 3's recording accepted as generation 4")
	}
}
