package phased

import (
	"fmt"
	"testing"
	"time"
)

func TestMemory(t *testing.T) {
	m := NewMemory()
	r := Recent{At: now, UpdateRevision: r2, Generation: 4, Partition: 1, Status: rollingR2(rps{Status: waitPod, Partition: 1})}
	m.Keep("uid-a", r)
	if got := m.Recall("uid-a", now.Add(29*time.Second)); got == nil || got.Partition != 1 {
		t.Fatalf("Recall within the window: %+v, want the move to partition 1", got)
	}
	if got := m.Recall("uid-b", now); got != nil {
		t.Fatalf("Recall of another composite: %+v, want nothing", got)
	}
	if got := m.Recall("uid-a", now.Add(recentWindow)); got != nil || m.Len() != 0 {
		t.Fatalf("Recall at the window's end: %+v (%d kept), want nothing and the entry dropped", got, m.Len())
	}
	m.Keep("", r)
	if m.Len() != 0 || m.Recall("", now) != nil {
		t.Fatal("a composite without a UID was remembered")
	}
	var none *Memory
	none.Keep("uid-a", r)
	if none.Recall("uid-a", now) != nil {
		t.Fatal("a nil Memory remembered")
	}
}

// TestMemoryBounded: however many rollouts move at once, at most
// memoryEntries are kept, the oldest moves forgotten first, the newest
// never.
func TestMemoryBounded(t *testing.T) {
	m := NewMemory()
	for i := range memoryEntries + 100 {
		m.Keep(fmt.Sprint("uid-", i), Recent{At: now.Add(time.Duration(i) * time.Millisecond), Partition: 1})
	}
	if m.Len() != memoryEntries {
		t.Fatalf("%d moves kept, want the bound %d", m.Len(), memoryEntries)
	}
	at := now.Add(time.Duration(memoryEntries+99) * time.Millisecond)
	if m.Recall(fmt.Sprint("uid-", memoryEntries+99), at) == nil || m.Recall("uid-0", at) != nil {
		t.Fatal("the newest move was forgotten, or the oldest kept")
	}
	// Moves older than the window make room first.
	m.Keep("late", Recent{At: now.Add(time.Hour)})
	if m.Len() != 1 {
		t.Fatalf("%d moves kept after every other one expired, want 1", m.Len())
	}
}
