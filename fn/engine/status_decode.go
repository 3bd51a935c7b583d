package engine

import (
	"math"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// decodeStatus decodes the composite's status as decodeField does. The
// recorded renderings are most of a status's bytes, and a JSON round trip
// copies and scans every one of them on every call; when they are exactly
// what this function writes (objects of a whole-number generation, a hash
// and an encoded string, nothing else), they are taken from the map as
// they are, and only the rest of the status goes through JSON. Anything
// else takes the JSON path whole, so an odd status decodes, or fails, as
// it always did.
func decodeStatus(obj map[string]any, out *v1alpha1.FireboltEngineStatus) error {
	st, ok := obj["status"].(map[string]any)
	if !ok {
		return decodeField(obj, "status", out)
	}
	raw, has := st["renderings"]
	if !has {
		return decodeField(obj, "status", out)
	}
	rs, ok := plainRenderings(raw)
	if !ok {
		return decodeField(obj, "status", out)
	}
	rest := make(map[string]any, len(st)-1)
	for k, v := range st {
		if k != "renderings" {
			rest[k] = v
		}
	}
	var st2 v1alpha1.FireboltEngineStatus
	if err := decodeField(map[string]any{"status": rest}, "status", &st2); err != nil {
		// Fail exactly as the whole status does.
		return decodeField(obj, "status", out)
	}
	st2.Renderings = rs
	*out = st2
	return nil
}

// plainRenderings reads status.renderings when every item is exactly the
// shape this function writes.
func plainRenderings(raw any) ([]v1alpha1.GenerationRendering, bool) {
	items, ok := raw.([]any)
	if !ok {
		return nil, false
	}
	out := make([]v1alpha1.GenerationRendering, 0, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		adopted, okA := m["adoptedHash"].(string)
		if !ok || (len(m) != 3 && (!okA || len(m) != 4)) {
			return nil, false
		}
		gen, okG := wholeNumber(m["generation"])
		hash, okH := m["hash"].(string)
		objs, okO := m["objects"].(string)
		if !okG || !okH || !okO {
			return nil, false
		}
		out = append(out, v1alpha1.GenerationRendering{Generation: gen, Hash: hash, AdoptedHash: adopted, Objects: objs})
	}
	if len(out) == 0 {
		// JSON decodes [] to an empty, non-nil slice; keep that path.
		return nil, false
	}
	return out, true
}

// wholeNumber is a number that encoding/json would decode into an int
// exactly: a whole float64 (what structpb gives) well inside int's range.
func wholeNumber(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int(f), true
}

// statusMap is toMap(status): the renderings are put in as the JSON
// round trip would decode them, and only the rest of the status is
// encoded and decoded.
func statusMap(status v1alpha1.FireboltEngineStatus) (map[string]any, error) {
	rs := status.Renderings
	status.Renderings = nil
	m, err := toMap(status)
	if err != nil || len(rs) == 0 {
		return m, err
	}
	items := make([]any, len(rs))
	for i, r := range rs {
		item := map[string]any{"generation": float64(r.Generation), "hash": r.Hash, "objects": r.Objects}
		if r.AdoptedHash != "" {
			item["adoptedHash"] = r.AdoptedHash
		}
		items[i] = item
	}
	m["renderings"] = items
	return m, nil
}
