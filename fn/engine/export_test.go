package engine

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
