package compositetest

import (
	"encoding/json"
	"testing"
)

// AsJSON is v as encoding/json decodes it (numbers as float64), so that
// objects equal in JSON compare equal whatever number types they were
// built with: one read from the API server (int64) and one that went
// through a response's protobuf Struct (float64).
func AsJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
