package engine

import (
	"container/list"
	"encoding/json"
	"reflect"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/signing"
)

// A stable engine's call decodes and verifies the same recording and
// renders the same spec, only to find the same hash, every time: most of a
// call's CPU and allocations. Both are pure functions of their inputs, so
// their answers are memoised here. An entry is found by the engine and the
// generation it is for (so one engine cannot evict itself, and a busy
// engine evicts only the least recently used) and is used only when
// everything the answer depends on equals, exactly, what the entry was
// computed from: a memo can miss, never answer for other inputs.

// Bounds of the memos, in bytes of heap an entry pins (its weight), so
// that the function's memory stops growing with the number of engines
// once the memos are full, and hostile recordings or specs near the API
// server's object limit cannot pin more: at most the bound in all, and
// no entry above a sixteenth of it, is kept. A recording entry holds its
// objects twice, decoded into maps and in protobuf form, plus the encoded
// string it is compared with: measured, 50 KB of heap for a two-replica
// generation whose JSON is 3.6 KB (TestMemoWeightsCoverTheirHeap), so it
// weighs recordingHeapPerJSONByte times its JSON. At that weight the
// recording memo holds about three hundred such generations; beyond them
// the least recently used are decoded again, which costs a call about
// half a millisecond. The render memo holds a typed copy of a spec (with
// its class's) and a hash per entry, about 3 KB for a small spec, so about
// 1,400 engines; the routing memo one small Service per generation, about
// 400 of them, cheap to render again. All three are full at about 1,500
// engines, and nothing else the function keeps grows with them but the
// phase gauge (TestMemoryFlatInEngines).
const (
	memoRecordingEntries = 4096
	memoRecordingBytes   = 16 << 20
	memoRenderEntries    = 4096
	memoRenderBytes      = 4 << 20
	memoRoutingEntries   = 4096
	memoRoutingBytes     = 4 << 20

	recordingHeapPerJSONByte = 16
	renderHeapPerJSONByte    = 2
	// recordingEntryOverhead is what a recording entry costs beyond its
	// contents: the list element, the map slot, the key and the hash.
	recordingEntryOverhead = 256
	// renderEntryOverhead is what a render entry costs whatever its spec:
	// the typed spec's many fields and the copied input (2.2 KB measured
	// for a spec whose JSON is 0.5 KB).
	renderEntryOverhead = 2 << 10
	// routingEntryWeight is what a routing entry pins whatever the engine:
	// one small Service, as a map and in protobuf form (8.6 KB measured).
	routingEntryWeight = 10 << 10
)

// slot is where a memo entry lives: one generation of one engine.
type slot struct {
	Engine    string
	Namespace string
	Gen       int
}

// recordingMemo remembers decodeRecording's answers.
var recordingMemo = newLRU[slot, recordingEntry](memoRecordingEntries, memoRecordingBytes)

type recordingEntry struct {
	ps      v1beta1.PodSecurity
	hash    string
	encoded string
	rec     Recording
	// structs are rec's objects in protobuf form, made once (nil for a
	// rejected recording).
	structs *generationStructs
}

// decodeRecordingMemo is decodeRecording, remembered. The Recording's
// Objects are shared between calls: they are only ever read (a Plan deep
// copies them), like a decoded recording always was.
func decodeRecordingMemo(engine, namespace string, ps v1beta1.PodSecurity, r v1alpha1.GenerationRendering) Recording {
	k := slot{Engine: engine, Namespace: namespace, Gen: r.Generation}
	if e, ok := recordingMemo.get(k); ok && e.matches(ps, r) {
		return e.rec
	}
	rec, size := decodeRecordingSized(engine, namespace, ps, r)
	// The weight is in proportion to the JSON the objects were decoded
	// from, not to the encoded form: gzip can make the JSON far larger.
	weight := recordingEntryOverhead + len(r.Objects) + recordingHeapPerJSONByte*size
	if weight > memoRecordingBytes/16 {
		// Not kept (see lru.put): encoding it for the response once more
		// would be wasted work.
		return rec
	}
	var structs *generationStructs
	if rec.usable() {
		structs = encodeStructs(rec.Objects)
	}
	recordingMemo.put(k, recordingEntry{ps: *ps.DeepCopy(), hash: r.Hash, encoded: r.Objects, rec: rec, structs: structs}, weight)
	return rec
}

func (e recordingEntry) matches(ps v1beta1.PodSecurity, r v1alpha1.GenerationRendering) bool {
	return e.hash == r.Hash && e.encoded == r.Objects && reflect.DeepEqual(e.ps, ps)
}

// recordedStructs is the protobuf form of the objects of rec, a recording
// decodeRecordingMemo decoded under the allow-list ps, when the memo
// still holds it; nil otherwise. The entry answers only for exactly the
// recording it was decoded from, as decodeRecordingMemo's own lookup.
func recordedStructs(engine, namespace string, ps v1beta1.PodSecurity, rec Recording) *generationStructs {
	if !rec.usable() {
		return nil
	}
	k := slot{Engine: engine, Namespace: namespace, Gen: rec.Generation}
	r := v1alpha1.GenerationRendering{Generation: rec.Generation, Hash: rec.Hash, Objects: rec.Encoded}
	if e, ok := recordingMemo.get(k); ok && e.matches(ps, r) {
		return e.structs
	}
	return nil
}

// renderMemo remembers the hash a renderInput renders to.
var renderMemo = newLRU[slot, renderEntry](memoRenderEntries, memoRenderBytes)

type renderEntry struct {
	in   renderInput
	hash string
}

// renderedHash is record(r.Gen, renderGeneration(r)).Hash, remembered.
// reflect.DeepEqual tells a nil slice or map from an empty one, so an entry
// answers only for inputs the renderer cannot tell from its own.
func renderedHash(r renderInput) string {
	k := slot{Engine: r.Engine, Namespace: r.Namespace, Gen: r.Gen}
	if e, ok := renderMemo.get(k); ok && reflect.DeepEqual(e.in, r) {
		return e.hash
	}
	h := record(r.Gen, renderGeneration(r)).Hash
	if w, ok := renderInputWeight(r, memoRenderBytes/16); ok {
		renderMemo.put(k, renderEntry{in: copyRenderInput(r), hash: h}, w)
	}
	return h
}

// renderInputWeight is what an entry for r pins, counted from the JSON
// of its parts that callers can make large (the spec, the class, the
// custom configuration, the instance's auth and engine TLS); ok is false when that is
// more than limit, or a part does not encode, and then r is not kept.
func renderInputWeight(r renderInput, limit int) (int, bool) {
	w := renderEntryOverhead
	for _, part := range []any{r.Spec, r.Class, r.CustomConfig, r.Auth, r.TLS} {
		b, err := json.Marshal(part)
		if err != nil {
			return 0, false
		}
		if w += renderHeapPerJSONByte * len(b); w > limit {
			return 0, false
		}
	}
	return w, true
}

// copyRenderInput copies r so that an entry never aliases a caller's
// spec.
func copyRenderInput(r renderInput) renderInput {
	r.Spec = *r.Spec.DeepCopy()
	r.Class = r.Class.DeepCopy()
	if r.CustomConfig != nil {
		r.CustomConfig = runtime.DeepCopyJSON(r.CustomConfig)
	}
	if r.Auth != nil {
		a := signing.EngineAuth{Spec: *r.Auth.Spec.DeepCopy(), AdminSecretVersion: r.Auth.AdminSecretVersion}
		if r.Auth.Keys != nil {
			a.Keys = make([]v1alpha1.SigningKeyStatus, len(r.Auth.Keys))
			for i := range r.Auth.Keys {
				r.Auth.Keys[i].DeepCopyInto(&a.Keys[i])
			}
		}
		r.Auth = &a
	}
	if r.TLS != nil {
		t := TLS{Instance: r.TLS.Instance, Issuer: *r.TLS.Issuer.DeepCopy()}
		r.TLS = &t
	}
	return r
}

// routingMemo remembers the routing Service of an engine's generation
// with its protobuf form. An entry lives in the engine's generation's
// slot and answers only for exactly the Routing it was rendered from (the
// instance and the published auth hash too), so a change of either
// replaces it rather than piling up entries.
var routingMemo = newLRU[slot, routingEntry](memoRoutingEntries, memoRoutingBytes)

// routingEntry is a remembered routing Service; st is nil when obj has no
// protobuf form.
type routingEntry struct {
	r   Routing
	obj map[string]any
	st  *composite.SharedStruct
}

func routingEntryOf(r Routing) routingEntry {
	r = r.normalized()
	k := slot{Engine: r.Engine, Namespace: r.Namespace, Gen: r.Gen}
	e, ok := routingMemo.get(k)
	if !ok || e.r != r {
		e = routingEntry{r: r, obj: renderRoutingService(r)}
		if st, err := structpb.NewStruct(e.obj); err == nil {
			e.st = composite.NewSharedStruct(st)
		}
		routingMemo.put(k, e, routingEntryWeight)
	}
	return e
}

// routingServiceMemo is renderRoutingService, remembered; every caller
// gets its own copy.
func routingServiceMemo(r Routing) map[string]any {
	return runtime.DeepCopyJSON(routingEntryOf(r).obj)
}

// routingServiceDesired is the routing Service as a desired resource, as
// a recording's objects are (see Recording.desired): the remembered
// object and its protobuf form, both shared and read-only. It is returned
// on every call; copying the map and converting it again each time was
// most of what it cost.
func routingServiceDesired(r Routing) DesiredObject {
	e := routingEntryOf(r)
	if e.st == nil {
		return DesiredObject{Object: runtime.DeepCopyJSON(e.obj), Ready: true}
	}
	return DesiredObject{Object: e.obj, Ready: true, Struct: e.st.Struct()}
}

// lru is a least-recently-used map bounded by entries and, when maxWeight
// is positive, by the sum of its entries' weights. Safe for concurrent use.
type lru[K comparable, V any] struct {
	mu         sync.Mutex
	maxEntries int
	maxWeight  int
	weight     int
	order      *list.List // of *lruItem[K, V], most recent first
	items      map[K]*list.Element
}

type lruItem[K comparable, V any] struct {
	key    K
	value  V
	weight int
}

func newLRU[K comparable, V any](maxEntries, maxWeight int) *lru[K, V] {
	return &lru[K, V]{maxEntries: maxEntries, maxWeight: maxWeight, order: list.New(), items: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruItem[K, V]).value, true
}

// put stores v under k, replacing what k held, and evicts the least
// recently used entries beyond the bounds. An entry heavier than a
// sixteenth of maxWeight is not kept at all.
func (c *lru[K, V]) put(k K, v V, weight int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.remove(e)
	}
	if c.maxWeight > 0 && weight > c.maxWeight/16 {
		return
	}
	c.items[k] = c.order.PushFront(&lruItem[K, V]{key: k, value: v, weight: weight})
	c.weight += weight
	for c.order.Len() > c.maxEntries || (c.maxWeight > 0 && c.weight > c.maxWeight) {
		c.remove(c.order.Back())
	}
}

func (c *lru[K, V]) remove(e *list.Element) {
	it := c.order.Remove(e).(*lruItem[K, V])
	delete(c.items, it.key)
	c.weight -= it.weight
}

// clear drops every entry.
func (c *lru[K, V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.items)
	c.weight = 0
}

// weighs is the sum of the weights held.
func (c *lru[K, V]) weighs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.weight
}

func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
