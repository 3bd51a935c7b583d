package engine

import "fmt"

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
