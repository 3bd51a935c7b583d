package engine

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// errText compares recordings by their error's text.
var errText = cmp.Comparer(func(a, b error) bool { return fmt.Sprint(a) == fmt.Sprint(b) })

// TestDecodeRecordingMemoNeverAnswersForOtherInputs feeds one engine's
// generation (one memo slot) a sequence of recordings and allow-lists, each
// differing from the last in one input, and wants from the memo exactly
// what decoding them afresh gives.
func TestDecodeRecordingMemoNeverAnswersForOtherInputs(t *testing.T) {
	in := testInputs(t, "stable", 5, 5)
	// A unique engine name: the memo is shared by every test.
	in.Engine = "memo-recording"
	plain := renderFor(in, 5, in.Spec)
	hostSpec := *in.Spec.DeepCopy()
	hostSpec.Storage.HostPath = &v1alpha1.HostPathStorageSpec{Path: "/mnt/data"}
	host := renderFor(in, 5, hostSpec)
	allowMnt := v1beta1.PodSecurity{AllowedHostPaths: []string{"/mnt"}}
	tampered := renderFor(in, 5, func() v1alpha1.FireboltEngineSpec { s := in.Spec; s.Replicas = 7; return s }())

	type step struct {
		name   string
		ps     v1beta1.PodSecurity
		r      v1alpha1.GenerationRendering
		reject string // a substring of the error, or "" for accepted
	}
	steps := []step{
		{name: "Recorded", r: v1alpha1.GenerationRendering{Generation: 5, Hash: plain.Hash, Objects: plain.Encoded}},
		{name: "SameAgain", r: v1alpha1.GenerationRendering{Generation: 5, Hash: plain.Hash, Objects: plain.Encoded}},
		{name: "OtherContentSameHash", r: v1alpha1.GenerationRendering{Generation: 5, Hash: plain.Hash, Objects: tampered.Encoded}, reject: "does not match its content"},
		{name: "SameContentOtherHash", r: v1alpha1.GenerationRendering{Generation: 5, Hash: "0123456789abcdef", Objects: plain.Encoded}, reject: "does not match its content"},
		{name: "HostPathAllowed", ps: allowMnt, r: v1alpha1.GenerationRendering{Generation: 5, Hash: host.Hash, Objects: host.Encoded}},
		{name: "HostPathNoLongerAllowed", r: v1alpha1.GenerationRendering{Generation: 5, Hash: host.Hash, Objects: host.Encoded}, reject: "hostPath"},
		{name: "HostPathEmptyAllowList", ps: v1beta1.PodSecurity{AllowedHostPaths: []string{}}, r: v1alpha1.GenerationRendering{Generation: 5, Hash: host.Hash, Objects: host.Encoded}, reject: "hostPath"},
		{name: "HostPathAllowedAgain", ps: allowMnt, r: v1alpha1.GenerationRendering{Generation: 5, Hash: host.Hash, Objects: host.Encoded}},
		{name: "Undecodable", r: v1alpha1.GenerationRendering{Generation: 5, Hash: plain.Hash, Objects: "not base64!"}, reject: "base64"},
		{name: "RecordedAgain", r: v1alpha1.GenerationRendering{Generation: 5, Hash: plain.Hash, Objects: plain.Encoded}},
	}
	for _, s := range steps {
		want := decodeRecording(in.Engine, in.Namespace, s.ps, s.r)
		got := decodeRecordingMemo(in.Engine, in.Namespace, s.ps, s.r)
		if diff := cmp.Diff(want, got, errText); diff != "" {
			t.Errorf("%s: the memo answered differently from a fresh decode, -want, +got:\n%s", s.name, diff)
		}
		checkStructs(t, s.name, got, recordedStructs(in.Engine, in.Namespace, s.ps, got))
		switch {
		case s.reject == "" && got.Err != nil:
			t.Errorf("%s: want accepted, got %v", s.name, got.Err)
		case s.reject != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), s.reject)):
			t.Errorf("%s: want rejected for %q, got %v", s.name, s.reject, got.Err)
		}
	}
	// The slot now holds the plain recording under an empty allow-list: it
	// must not answer for another recording or another allow-list.
	hostRec := decodeRecording(in.Engine, in.Namespace, allowMnt, v1alpha1.GenerationRendering{Generation: 5, Hash: host.Hash, Objects: host.Encoded})
	if recordedStructs(in.Engine, in.Namespace, allowMnt, hostRec) != nil {
		t.Error("the memo gave the protobuf objects of another recording")
	}
	plainRec := decodeRecording(in.Engine, in.Namespace, v1beta1.PodSecurity{}, v1alpha1.GenerationRendering{Generation: 5, Hash: plain.Hash, Objects: plain.Encoded})
	if recordedStructs(in.Engine, in.Namespace, allowMnt, plainRec) != nil {
		t.Error("the memo gave protobuf objects decoded under another allow-list")
	}
	if recordedStructs(in.Engine, in.Namespace, v1beta1.PodSecurity{}, plainRec) == nil {
		t.Error("the memo lost the protobuf objects of the recording it holds")
	}
}

// checkStructs wants a recording's protobuf objects, when it has them, to
// be exactly its objects, and present for an accepted recording.
func checkStructs(t *testing.T, name string, r Recording, structs *generationStructs) {
	t.Helper()
	if r.usable() != (structs != nil) {
		t.Errorf("%s: accepted %v, but has protobuf objects %v", name, r.usable(), structs != nil)
	}
	if structs == nil {
		return
	}
	for _, suffix := range generationSuffixes {
		want, err := structpb.NewStruct(r.Objects.bySuffix(suffix))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, structs.bySuffix[suffix].Struct(), protocmp.Transform()); diff != "" {
			t.Errorf("%s: the %s object's protobuf form differs from its object, -want, +got:\n%s", name, suffix, diff)
		}
	}
}

// TestRenderedHashMemoFollowsEveryInput changes one render input at a time
// in one memo slot and wants the hash a fresh rendering gives.
func TestRenderedHashMemoFollowsEveryInput(t *testing.T) {
	base := renderInput{
		Engine: "memo-render", Namespace: "firebolt", Gen: 2,
		Spec:       v1alpha1.FireboltEngineSpec{InstanceRef: "inst", Replicas: 2},
		InstanceID: "01JBCDEFGHJKMNPQRSTVWXYZ00", MetadataEndpoint: "inst-metadata.firebolt.svc.cluster.local:7000",
		Images: v1beta1.Images{Engine: "engine:1", Metadata: "metadata:1"},
	}
	with := func(f func(r *renderInput)) renderInput {
		r := copyRenderInput(base)
		f(&r)
		return r
	}
	tolerations := func(ts []corev1.Toleration) renderInput {
		return with(func(r *renderInput) {
			r.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Tolerations: ts}}
		})
	}
	steps := []struct {
		name string
		in   renderInput
	}{
		{"Base", base},
		{"Replicas", with(func(r *renderInput) { r.Spec.Replicas = 3 })},
		{"Image", with(func(r *renderInput) { r.Images.Engine = "engine:2" })},
		{"Endpoint", with(func(r *renderInput) { r.MetadataEndpoint = "elsewhere:7000" })},
		{"CustomConfig", with(func(r *renderInput) { r.CustomConfig = map[string]any{"logging": map[string]any{"level": "debug"}} })},
		{"Class", with(func(r *renderInput) { r.Class = &v1alpha1.FireboltEngineClassSpec{} })},
		{"NilTolerations", tolerations(nil)},
		{"EmptyTolerations", tolerations([]corev1.Toleration{})},
		{"OneToleration", tolerations([]corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}})},
		{"BaseAgain", base},
	}
	for _, s := range steps {
		want := record(s.in.Gen, renderGeneration(s.in)).Hash
		if got := renderedHash(s.in); got != want {
			t.Errorf("%s: memo answered %s, a fresh rendering hashes to %s", s.name, got, want)
		}
	}
	// The memo keeps its own copy: changing the caller's input afterwards
	// must not change what the entry answers for.
	in := with(func(r *renderInput) { r.CustomConfig = map[string]any{"a": "b"} })
	renderedHash(in)
	in.CustomConfig["a"] = "c"
	if got, want := renderedHash(in), record(in.Gen, renderGeneration(in)).Hash; got != want {
		t.Errorf("after the caller mutated its input: memo answered %s, want %s", got, want)
	}
}

func TestRoutingServiceMemoReturnsACopy(t *testing.T) {
	a := RenderRoutingService(Routing{Engine: "memo-routing", Namespace: "firebolt", Gen: 1})
	a["spec"].(map[string]any)["selector"].(map[string]any)["x"] = "y"
	b := RenderRoutingService(Routing{Engine: "memo-routing", Namespace: "firebolt", Gen: 1})
	if diff := cmp.Diff(renderRoutingService(Routing{Engine: "memo-routing", Namespace: "firebolt", Gen: 1}), b); diff != "" {
		t.Errorf("a caller's change leaked into the memo, -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(renderRoutingService(Routing{Engine: "memo-routing", Namespace: "firebolt", Gen: 2}), RenderRoutingService(Routing{Engine: "memo-routing", Namespace: "firebolt", Gen: 2})); diff != "" {
		t.Errorf("generation 2, -want, +got:\n%s", diff)
	}
}

// TestRoutingServiceDesiredIsShared: the routing Service a plan returns is
// what rendering it gives, in both forms, shared by every response that
// returns it; an edit of one response's Service is caught at the next use
// (verification is on in these tests, see TestMain) rather than reaching
// a later response.
func TestRoutingServiceDesiredIsShared(t *testing.T) {
	want := renderRoutingService(Routing{Engine: "memo-desired", Namespace: "firebolt", Gen: 1})
	wantStruct, err := structpb.NewStruct(want)
	if err != nil {
		t.Fatal(err)
	}
	a := routingServiceDesired(Routing{Engine: "memo-desired", Namespace: "firebolt", Gen: 1})
	b := routingServiceDesired(Routing{Engine: "memo-desired", Namespace: "firebolt", Gen: 1})
	if a.Struct != b.Struct {
		t.Error("two responses carry two copies of the routing Service, want one shared")
	}
	if diff := cmp.Diff(wantStruct, b.Struct, protocmp.Transform()); diff != "" {
		t.Errorf("struct, -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(want, b.Object); diff != "" {
		t.Errorf("object, -want, +got:\n%s", diff)
	}
	if !a.Ready || !b.Ready {
		t.Errorf("readiness: a Service is ready once applied, got %t and %t", a.Ready, b.Ready)
	}
	// The edited entry is dropped afterwards: it would fail the check of
	// every memo entry after the tests (TestMain).
	t.Cleanup(routingMemo.clear)
	a.Struct.GetFields()["spec"].GetStructValue().GetFields()["selector"].GetStructValue().GetFields()[LabelGeneration] = structpb.NewStringValue("9")
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "written to after it was made") {
			t.Errorf("an edit of a response's routing Service: recovered %v, want the shared-object panic", r)
		}
	}()
	routingServiceDesired(Routing{Engine: "memo-desired", Namespace: "firebolt", Gen: 1})
}

// TestRenderMemoBoundsItsBytes: the render memo keeps a copy of every
// spec it answers for, so what it pins is bounded in bytes, not only in
// entries, and a spec too large to keep is answered without being kept.
func TestRenderMemoBoundsItsBytes(t *testing.T) {
	input := func(name string, configBytes int) renderInput {
		return renderInput{
			Engine: name, Namespace: "memo-bytes", Gen: 1,
			Spec:         v1alpha1.FireboltEngineSpec{InstanceRef: "inst", Replicas: 1},
			InstanceID:   "01JBCDEFGHJKMNPQRSTVWXYZ00",
			CustomConfig: map[string]any{"note": strings.Repeat("x", configBytes)},
			Images:       v1beta1.Images{Engine: "engine:1", Metadata: "metadata:1"},
		}
	}
	held := func(r renderInput) bool {
		_, ok := renderMemo.get(slot{Engine: r.Engine, Namespace: r.Namespace, Gen: r.Gen})
		return ok
	}

	huge := input("memo-bytes-huge", memoRenderBytes/16)
	if got, want := renderedHash(huge), record(huge.Gen, renderGeneration(huge)).Hash; got != want {
		t.Errorf("a spec too large to keep: memo answered %s, a fresh rendering hashes to %s", got, want)
	}
	if held(huge) {
		t.Errorf("the memo kept a spec of over %d bytes, more than a sixteenth of its %d-byte bound", memoRenderBytes/16, memoRenderBytes)
	}

	// Twice the bound in entries of a 64th of it each: the memo must have
	// evicted, and the last one put is held.
	var last renderInput
	for i := range 128 {
		last = input(fmt.Sprintf("memo-bytes-%03d", i), memoRenderBytes/128)
		renderedHash(last)
	}
	if w := renderMemo.weighs(); w > memoRenderBytes {
		t.Errorf("the render memo weighs %d bytes, bound %d", w, memoRenderBytes)
	}
	if !held(last) {
		t.Errorf("the render memo does not hold the entry put last")
	}
}

// TestMemoWeightsCoverTheirHeap: what an entry is charged is at least the
// heap it pins, so a memo's byte bound bounds the function's memory. The
// recording memo once charged a fifth of it (8.9 KB for 50 KB).
func TestMemoWeightsCoverTheirHeap(t *testing.T) {
	const n = 200
	heapOf := func(fill func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		fill()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if after.HeapAlloc < before.HeapAlloc {
			return 0
		}
		return after.HeapAlloc - before.HeapAlloc
	}
	check := func(name string, c interface {
		weighs() int
		clear()
	}, fill func()) {
		// Empty, so that no entry is evicted while the new ones are put.
		c.clear()
		w0 := c.weighs()
		heap := heapOf(fill)
		charged := c.weighs() - w0
		t.Logf("%s: %d entries pin %d bytes of heap (%d each), charged %d (%d each)", name, n, heap, heap/n, charged, charged/n)
		if charged <= 0 || heap > uint64(charged) {
			t.Errorf("%s: %d entries pin %d bytes of heap but are charged %d: the memo's byte bound does not bound its memory", name, n, heap, charged)
		}
	}

	in := testInputs(t, "stable", 0, 0)
	in.Spec.Template = &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "analytics"}, Annotations: map[string]string{"note": strings.Repeat("n", 256)}},
		Spec:       corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "firebolt", Effect: corev1.TaintEffectNoSchedule}}},
	}
	renderings := make([]v1alpha1.GenerationRendering, n)
	inputs := make([]renderInput, n)
	for i := range n {
		in.Engine = fmt.Sprintf("memo-heap-%03d", i)
		rec := renderFor(in, 0, in.Spec)
		renderings[i] = v1alpha1.GenerationRendering{Generation: 0, Hash: rec.Hash, Objects: rec.Encoded}
		inputs[i] = newMachine(in, Signals{}).renderInput(0)
	}
	check("recording memo", recordingMemo, func() {
		for i := range n {
			if rec := decodeRecordingMemo(inputs[i].Engine, in.Namespace, in.Config.PodSecurity, renderings[i]); !rec.usable() {
				t.Fatalf("recording %d not usable: %v", i, rec.Err)
			}
		}
	})
	check("render memo", renderMemo, func() {
		for i := range n {
			renderedHash(inputs[i])
		}
	})
	check("routing memo", routingMemo, func() {
		for i := range n {
			routingEntryOf(Routing{Engine: inputs[i].Engine, Namespace: in.Namespace, Instance: in.Spec.InstanceRef})
		}
	})
}

func TestLRUBounds(t *testing.T) {
	cases := map[string]struct {
		maxEntries, maxWeight int
		puts                  []int // weights, keyed 0, 1, 2, ...
		getFirst              bool  // touch key 0 after the first two puts
		want                  []int // keys held afterwards
	}{
		"EntriesEvictLeastRecentlyUsed": {maxEntries: 2, puts: []int{0, 0, 0}, want: []int{1, 2}},
		"AGetKeepsAnEntry":              {maxEntries: 2, puts: []int{0, 0, 0}, getFirst: true, want: []int{0, 2}},
		"EntriesBoundWithWeight":        {maxEntries: 10, maxWeight: 160, puts: []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, want: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}[6:]},
		"WeightAloneEvicts":             {maxEntries: 100, maxWeight: 160, puts: []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, want: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		"TooHeavyIsNotKept":             {maxEntries: 10, maxWeight: 160, puts: []int{10, 11}, want: []int{0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newLRU[int, int](tc.maxEntries, tc.maxWeight)
			for k, w := range tc.puts {
				c.put(k, k, w)
				if k == 1 && tc.getFirst {
					c.get(0)
				}
			}
			var got []int
			for k := range tc.puts {
				if v, ok := c.get(k); ok && v == k {
					got = append(got, k)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("held keys, -want, +got:\n%s", diff)
			}
			if c.len() > tc.maxEntries {
				t.Errorf("holds %d entries, bound %d", c.len(), tc.maxEntries)
			}
		})
	}
}
