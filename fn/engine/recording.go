package engine

import (
	"encoding/json"
	"sort"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// recordingVersion versions the recorded encoding. A future function that
// changes the document's shape bumps it and keeps a decoder for every
// version it may find in a live composite's status.
const recordingVersion = 1

// Bounds of a stored recording. A generation's three objects are a few KiB
// and the whole composite, status included, fits etcd's 1.5 MiB; the bounds
// only stop a corrupted or hostile status from exhausting memory: the
// encoded form is measured before it is decoded, and decompression stops
// one byte past maxRecordingBytes, so a gzip bomb allocates no more.
const (
	maxEncodedRecordingBytes = 2 << 20
	maxRecordingBytes        = 4 << 20
	// maxRecordings is the schema's MaxItems of status.renderings; more
	// are not decoded at all.
	maxRecordings = 3
)

// GenerationObjects are one generation's objects as rendered, each as the
// unstructured content that is returned to Crossplane.
type GenerationObjects struct {
	ConfigMap   map[string]any `json:"configMap"`
	Headless    map[string]any `json:"headless"`
	StatefulSet map[string]any `json:"statefulSet"`
}

// bySuffix returns the object with a resource-name suffix.
func (g GenerationObjects) bySuffix(suffix string) map[string]any {
	switch suffix {
	case suffixConfig:
		return g.ConfigMap
	case suffixHeadless:
		return g.Headless
	case suffixStatefulSet:
		return g.StatefulSet
	}
	return nil
}

// recordingDoc is the canonical document a rendering is hashed and stored
// as.
type recordingDoc struct {
	Version int               `json:"version"`
	Objects GenerationObjects `json:"objects"`
}

// A Recording is one generation's rendering: the objects, their hash and
// their encoding as stored in status.
type Recording struct {
	Generation int
	Hash       string
	// AdoptedHash is set on a generation adopted from the original
	// operator: the hash this function rendered for the spec it was
	// adopted under. The spec renders the generation while it renders
	// either hash (matches).
	AdoptedHash string
	Encoded     string
	Objects     GenerationObjects
	// Err says why a stored rendering could not be decoded; Objects is then
	// empty and the generation is treated as having no recording.
	Err error
}

// generationStructs are a generation's objects as structpb.NewStruct
// makes them, by resource-name suffix.
type generationStructs struct {
	bySuffix map[string]*composite.SharedStruct
}

// encodeStructs is objs in protobuf form; nil when an object cannot be
// encoded (then each call converts it, and fails, as it always did).
func encodeStructs(objs GenerationObjects) *generationStructs {
	out := &generationStructs{bySuffix: make(map[string]*composite.SharedStruct, len(generationSuffixes))}
	for _, suffix := range generationSuffixes {
		o := objs.bySuffix(suffix)
		if o == nil {
			continue
		}
		st, err := structpb.NewStruct(o)
		if err != nil {
			return nil
		}
		out.bySuffix[suffix] = composite.NewSharedStruct(st)
	}
	return out
}

// desired is the desired resource for r's object with a resource-name
// suffix; structs is r's objects in protobuf form, or nil. With the
// protobuf form at hand, the response carries it, shared
// (composite.SharedStruct), and Object is the shared decoded object;
// nothing downstream writes to either (Write reads Struct alone).
// Otherwise Object is a copy that Write converts.
func (r Recording) desired(structs *generationStructs, suffix string, ready bool) DesiredObject {
	obj := r.Objects.bySuffix(suffix)
	if structs != nil {
		if st := structs.bySuffix[suffix]; st != nil {
			return DesiredObject{Object: obj, Ready: ready, Struct: st.Struct()}
		}
	}
	return DesiredObject{Object: deepCopy(obj), Ready: ready}
}

// matches reports whether a spec that renders hash renders this
// generation: its own hash, or the hash of the spec it was adopted under.
func (r Recording) matches(hash string) bool {
	return r.Hash == hash || (r.AdoptedHash != "" && r.AdoptedHash == hash)
}

// usable reports whether the recording can reproduce its generation.
func (r Recording) usable() bool { return r.Err == nil && r.Objects.StatefulSet != nil }

// record hashes a generation's objects. encoding/json writes map keys
// sorted and the objects hold only JSON values, so equal objects give equal
// bytes and equal hashes. The stored encoding is only made when the
// recording is written (encoded): most calls just compare hashes.
func record(gen int, objs GenerationObjects) Recording {
	return Recording{Generation: gen, Hash: podtemplate.ContentHash(recordingDoc{Version: recordingVersion, Objects: objs}), Objects: objs}
}

func canonical(objs GenerationObjects) []byte {
	b, err := json.Marshal(recordingDoc{Version: recordingVersion, Objects: objs})
	if err != nil {
		// The objects were decoded from JSON; failing to encode them again
		// is a programming error, not bad input.
		panic("engine: cannot encode rendering: " + err.Error())
	}
	return b
}

// encoded returns r with its stored form: gzip, then base64.
func (r Recording) encoded() Recording {
	if r.Encoded != "" {
		return r
	}
	r.Encoded = composite.Pack(canonical(r.Objects))
	return r
}

// decodeRecording reverses record, and accepts the result only if it is
// what engine's generation would have been rendered as: see
// verifyRecording.
func decodeRecording(engine, namespace string, ps v1beta1.PodSecurity, r v1alpha1.GenerationRendering) Recording {
	rec, _ := decodeRecordingSized(engine, namespace, ps, r)
	return rec
}

// decodeRecordingSized is decodeRecording that also returns how many bytes
// of JSON the accepted recording's objects were decoded from; 0 when it was
// rejected.
func decodeRecordingSized(engine, namespace string, ps v1beta1.PodSecurity, r v1alpha1.GenerationRendering) (Recording, int) {
	out := Recording{Generation: r.Generation, Hash: r.Hash, Encoded: r.Objects}
	objs, size, err := decodeObjects(r.Objects)
	if err == nil {
		out.Objects = objs
		err = verifyRecording(engine, namespace, ps, out)
	}
	if err != nil {
		return Recording{Generation: r.Generation, Hash: r.Hash, Err: err}, 0
	}
	return out, size
}

func decodeObjects(s string) (GenerationObjects, int, error) {
	b, err := composite.Unpack(s, "rendering", maxEncodedRecordingBytes, maxRecordingBytes)
	if err != nil {
		return GenerationObjects{}, 0, err
	}
	var doc recordingDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return GenerationObjects{}, 0, errors.Wrap(err, "cannot parse JSON")
	}
	if doc.Version != recordingVersion {
		return GenerationObjects{}, 0, errors.Errorf("unknown rendering version %d, want %d", doc.Version, recordingVersion)
	}
	o := doc.Objects
	if o.ConfigMap == nil || o.Headless == nil || o.StatefulSet == nil {
		return GenerationObjects{}, 0, errors.New("rendering lacks an object")
	}
	return o, len(b), nil
}

// decodeRecordings decodes and verifies engine's status.renderings by
// generation. A rejected recording keeps its Err and no objects, so its
// generation is treated as having no recording.
func decodeRecordings(engine, namespace string, ps v1beta1.PodSecurity, rs []v1alpha1.GenerationRendering) map[int]Recording {
	out := make(map[int]Recording, min(len(rs), maxRecordings))
	if len(rs) > maxRecordings {
		// More than a rollout ever records: none of them is trusted, and
		// the excess is not even looked at.
		for _, r := range rs[:maxRecordings] {
			out[r.Generation] = Recording{Generation: r.Generation, Hash: r.Hash,
				Err: errors.Errorf("status holds %d renderings, at most %d are ever recorded", len(rs), maxRecordings)}
		}
		return out
	}
	for _, r := range rs {
		rec := decodeRecordingMemo(engine, namespace, ps, r)
		if rec.Err == nil && isHash(r.AdoptedHash) {
			rec.AdoptedHash = r.AdoptedHash
		}
		out[r.Generation] = rec
	}
	return out
}

// statusRenderings is the status form of recordings, sorted by generation.
// A recording that could not be decoded is never written back.
func statusRenderings(rs map[int]Recording) []v1alpha1.GenerationRendering {
	out := make([]v1alpha1.GenerationRendering, 0, len(rs))
	for _, r := range rs {
		if r.Err != nil {
			continue
		}
		out = append(out, v1alpha1.GenerationRendering{Generation: r.Generation, Hash: r.Hash, AdoptedHash: r.AdoptedHash, Objects: r.Encoded})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Generation < out[j].Generation })
	if len(out) == 0 {
		return nil
	}
	return out
}

// deepCopy copies an object so a Plan never aliases a recording.
func deepCopy(o map[string]any) map[string]any {
	if o == nil {
		return nil
	}
	return runtime.DeepCopyJSON(o)
}
