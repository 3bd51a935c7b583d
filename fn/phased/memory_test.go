package phased

import (
	"fmt"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// call is a request of a new reconcile: Crossplane starts every reconcile
// with an empty pipeline context.
func newReconcile() *fnv1.RunFunctionRequest { return &fnv1.RunFunctionRequest{} }

// again is the next call of rsp's reconcile: Crossplane hands it the
// context the last call returned.
func again(rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionRequest {
	return &fnv1.RunFunctionRequest{Context: rsp.GetContext()}
}

func lowering(at time.Time) *Recent {
	return &Recent{At: at, UpdateRevision: r2, Generation: 4, Partition: 1, Status: rollingR2(rps{Status: waitPod, Partition: 1})}
}

func TestMemory(t *testing.T) {
	m := NewMemory()
	rsp := &fnv1.RunFunctionResponse{}
	m.Settle("uid-a", newReconcile(), rsp, lowering(now))
	if rsp.GetContext().GetFields()[ContextKey].GetStringValue() == "" {
		t.Fatal("a move set no tag in the pipeline context")
	}
	if got := m.Recall("uid-a", newReconcile(), now.Add(29*time.Second)); got == nil || got.Partition != 1 {
		t.Fatalf("Recall in a later reconcile within the window: %+v, want the move to partition 1", got)
	}
	if got := m.Recall("uid-b", newReconcile(), now); got != nil {
		t.Fatalf("Recall of another composite: %+v, want nothing", got)
	}
	if got := m.Recall("uid-a", newReconcile(), now.Add(recentWindow)); got != nil || m.Len() != 0 {
		t.Fatalf("Recall at the window's end: %+v (%d kept), want nothing and the entry dropped", got, m.Len())
	}
	m.Settle("", newReconcile(), &fnv1.RunFunctionResponse{}, lowering(now))
	if m.Len() != 0 || m.Recall("", newReconcile(), now) != nil {
		t.Fatal("a composite without a UID was remembered")
	}
	var none *Memory
	none.Settle("uid-a", newReconcile(), &fnv1.RunFunctionResponse{}, lowering(now))
	if none.Recall("uid-a", newReconcile(), now) != nil {
		t.Fatal("a nil Memory remembered")
	}
}

// TestMemoryWithinAReconcile: a move made by an earlier call of the same
// reconcile is not read by the next call, which decides afresh (its answer
// is the one Crossplane applies, with its events); if that call makes no
// move the earlier one is forgotten, else it replaces it. A move of an
// earlier reconcile stays whatever a call without a move of its own does.
func TestMemoryWithinAReconcile(t *testing.T) {
	m := NewMemory()
	first := &fnv1.RunFunctionResponse{}
	m.Settle("uid-a", newReconcile(), first, lowering(now))
	if got := m.Recall("uid-a", again(first), now); got != nil {
		t.Fatalf("the next call of the same reconcile recalled its own reconcile's move: %+v", got)
	}
	second := &fnv1.RunFunctionResponse{Context: again(first).GetContext()}
	m.Settle("uid-a", again(first), second, nil)
	if got := m.Recall("uid-a", newReconcile(), now); got != nil {
		t.Fatalf("a move the applied call did not make is still remembered: %+v", got)
	}

	// Replaced by the later call's own move.
	first = &fnv1.RunFunctionResponse{}
	m.Settle("uid-a", newReconcile(), first, lowering(now))
	later := lowering(now.Add(time.Second))
	later.Partition = 0
	second = &fnv1.RunFunctionResponse{}
	m.Settle("uid-a", again(first), second, later)
	if got := m.Recall("uid-a", newReconcile(), now.Add(2*time.Second)); got == nil || got.Partition != 0 {
		t.Fatalf("after the later call's move: %+v, want its move to partition 0", got)
	}

	// A call of another reconcile without a move leaves it.
	m.Settle("uid-a", newReconcile(), &fnv1.RunFunctionResponse{}, nil)
	if got := m.Recall("uid-a", newReconcile(), now.Add(2*time.Second)); got == nil {
		t.Fatal("a call of a later reconcile without a move forgot an earlier reconcile's move")
	}
}

// TestMemoryBounded: however many rollouts move at once, at most
// memoryEntries are kept, the oldest moves forgotten first, the newest
// never.
func TestMemoryBounded(t *testing.T) {
	m := NewMemory()
	for i := range memoryEntries + 100 {
		m.Settle(fmt.Sprint("uid-", i), newReconcile(), &fnv1.RunFunctionResponse{}, &Recent{At: now.Add(time.Duration(i) * time.Millisecond), Partition: 1})
	}
	if m.Len() != memoryEntries {
		t.Fatalf("%d moves kept, want the bound %d", m.Len(), memoryEntries)
	}
	at := now.Add(time.Duration(memoryEntries+99) * time.Millisecond)
	if m.Recall(fmt.Sprint("uid-", memoryEntries+99), newReconcile(), at) == nil || m.Recall("uid-0", newReconcile(), at) != nil {
		t.Fatal("the newest move was forgotten, or the oldest kept")
	}
	// Moves older than the window make room first.
	m.Settle("late", newReconcile(), &fnv1.RunFunctionResponse{}, &Recent{At: now.Add(time.Hour)})
	if m.Len() != 1 {
		t.Fatalf("%d moves kept after every other one expired, want 1", m.Len())
	}
}
