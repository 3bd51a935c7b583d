package phased

import (
	"sync"
	"time"
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
type Memory struct {
	mu      sync.Mutex
	entries map[string]Recent
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{entries: map[string]Recent{}} }

// Recall is key's last move, if it is younger than recentWindow at now.
func (m *Memory) Recall(key string, now time.Time) *Recent {
	if m == nil || key == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.entries[key]
	if !ok {
		return nil
	}
	if age := now.Sub(r.At); age < 0 || age >= recentWindow {
		delete(m.entries, key)
		return nil
	}
	return &r
}

// Keep remembers r as key's last move.
func (m *Memory) Keep(key string, r Recent) {
	if m == nil || key == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[key]; !ok && len(m.entries) >= memoryEntries {
		m.evict(r.At)
	}
	m.entries[key] = r
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
