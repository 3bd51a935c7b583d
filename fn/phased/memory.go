package phased

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// memoryEntries bounds the rollouts remembered at once. An entry is a
// Recent and its key, under a kilobyte; a move is remembered only for
// recentWindow, so the bound is reached only when more rollouts than this
// move within one window, and then the oldest moves are forgotten first
// (their rollouts decide on their snapshots, as without a memory).
const memoryEntries = 4096

// Memory keeps each rollout's last move (Recent) by key, the composite's
// UID, for the calls one function process serves. The zero Memory is not
// usable; a nil *Memory remembers nothing.
//
// Crossplane may call the function more than once in a reconcile and
// applies only the last answer: the first call gets the required objects
// of the previous reconcile, and when fresh ones differ it calls again.
// A move remembered from an earlier call of the same reconcile must
// neither stand in for the decision of a later one (whose event would be
// lost) nor outlive it: each move is tagged, the tag goes into the
// pipeline's context (ContextKey), which Crossplane hands to the next call
// of the same reconcile and to no other, and a call that finds its own
// reconcile's tag decides afresh and replaces or forgets that move.
type Memory struct {
	mu      sync.Mutex
	entries map[string]Recent
	tags    atomic.Uint64
}

// ContextKey is the pipeline context key carrying the tag of a move made
// in this reconcile.
const ContextKey = "firebolt.io/phased-move"

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{entries: map[string]Recent{}} }

// Recall is key's last move, if it is younger than recentWindow at now and
// was not made in req's own reconcile.
func (m *Memory) Recall(key string, req *fnv1.RunFunctionRequest, now time.Time) *Recent {
	if m == nil || key == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.entries[key]
	if !ok || r.tag != "" && r.tag == tagOf(req) {
		return nil
	}
	if age := now.Sub(r.At); age < 0 || age >= recentWindow {
		delete(m.entries, key)
		return nil
	}
	return &r
}

// Settle records what a call decided, moved being its move (nil when it
// made none): a move is remembered and its tag set in rsp's context; a
// call without one forgets a move an earlier call of its reconcile made,
// since Crossplane applies this call's answer instead.
func (m *Memory) Settle(key string, req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, moved *Recent) {
	if m == nil || key == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if moved == nil {
		if t := tagOf(req); t != "" && m.entries[key].tag == t {
			delete(m.entries, key)
		}
		return
	}
	r := *moved
	r.tag = strconv.FormatUint(m.tags.Add(1), 36)
	if _, ok := m.entries[key]; !ok && len(m.entries) >= memoryEntries {
		m.evict(r.At)
	}
	m.entries[key] = r
	if rsp.GetContext().GetFields() == nil {
		rsp.Context = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	rsp.Context.Fields[ContextKey] = structpb.NewStringValue(r.tag)
}

// tagOf is the tag of the move an earlier call of req's reconcile made.
func tagOf(req *fnv1.RunFunctionRequest) string {
	return req.GetContext().GetFields()[ContextKey].GetStringValue()
}

// evict drops the moves older than recentWindow at now and, if that frees
// nothing, the oldest one.
func (m *Memory) evict(now time.Time) {
	oldest, at := "", time.Time{}
	for k, r := range m.entries {
		if now.Sub(r.At) >= recentWindow {
			delete(m.entries, k)
			continue
		}
		if oldest == "" || r.At.Before(at) {
			oldest, at = k, r.At
		}
	}
	if len(m.entries) >= memoryEntries {
		delete(m.entries, oldest)
	}
}

// Len is the number of moves remembered.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}
