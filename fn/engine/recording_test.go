package engine

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
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

	got := decodeRecording(in.Engine, in.Namespace, v1alpha1.GenerationRendering{Generation: 3, Hash: rec.Hash, Objects: rec.Encoded})
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
			got := decodeRecording("demo", "firebolt", v1alpha1.GenerationRendering{Generation: 1, Hash: "h", Objects: enc})
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
	in.Renderings = decodeRecordings(in.Engine, in.Namespace, in.Status.Renderings)

	p := Compute(in, Signals{}, testNow)
	want := []v1alpha1.GenerationRendering{{Generation: 1, Hash: renderFor(in, 1, in.Spec).Hash, Objects: renderFor(in, 1, in.Spec).Encoded}}
	if diff := cmp.Diff(want, p.Status.Renderings); diff != "" {
		t.Errorf("renderings: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(sanitized(in.Observed["g0-statefulset"]), p.Resources["g0-statefulset"].Object); diff != "" {
		t.Errorf("g0-statefulset should be the sanitised observed object: -want, +got:\n%s", diff)
	}
}
