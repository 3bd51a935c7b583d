package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// LiftReplicaLimit lets the size benchmark render past the replica limit,
// to measure where rendering breaks; it returns the function that restores
// the limit.
func LiftReplicaLimit() (restore func()) {
	old := maxReplicas
	maxReplicas = 1 << 30
	return func() { maxReplicas = old }
}

// MemoWeights is what the recording and render memos hold, in the bytes
// of heap they are charged.
func MemoWeights() (recording, render int) {
	return recordingMemo.weighs(), renderMemo.weighs()
}

// CheckSharedStructs uses every shared desired object the recording and
// routing memos hold; with verification on, one written to since it was
// made panics, and the panic is returned, or "".
func CheckSharedStructs() (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	for _, e := range recordingMemo.values() {
		if e.structs != nil {
			for _, st := range e.structs.bySuffix {
				st.Struct()
			}
		}
	}
	for _, e := range routingMemo.values() {
		e.st.Struct()
	}
	return ""
}

// values is every value held, most recent first.
func (c *lru[K, V]) values() []V {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]V, 0, c.order.Len())
	for e := c.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*lruItem[K, V]).value)
	}
	return out
}

// LoadRequest reads the request testdata/requests/<name>.yaml.
func LoadRequest(t *testing.T, name string) *fnv1.RunFunctionRequest {
	t.Helper()
	y, err := os.ReadFile(filepath.Join("testdata", "requests", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	req := &fnv1.RunFunctionRequest{}
	if err := protojson.Unmarshal(j, req); err != nil {
		t.Fatal(err)
	}
	return req
}
