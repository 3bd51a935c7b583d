package wakeagent

import (
	"fmt"
	"strconv"
)

const (
	// EnvoyMemoryLimitEnv is set by the downward API to the Envoy
	// container's memory limit, when it has one.
	EnvoyMemoryLimitEnv = "ENVOY_MEMORY_LIMIT_BYTES"
	// FallbackCapacity is the hold cap when Envoy's memory limit is unknown.
	FallbackCapacity = 256
	// bytesPerHold is what one held request may cost Envoy: its buffered
	// request and the stream state.
	bytesPerHold = 2 << 20
	// maxCapacity bounds the cap however large the limit is.
	maxCapacity = 100000
)

// Capacity returns how many requests may be held at once, from the value of
// EnvoyMemoryLimitEnv as lookup reports it, and why, for the log: a quarter
// of Envoy's memory limit spent at bytesPerHold per hold, at most
// maxCapacity, and 0 (shed every request) when the quarter does not pay
// for one hold. Without a usable limit the cap is FallbackCapacity.
//
// The original agent also tightened the budget by Envoy's live
// server.memory_allocated from its admin stats; this one does not, so the
// gateway's memory limit must leave room for Envoy's baseline.
func Capacity(lookup func(string) (string, bool)) (capacity int, reason string) {
	v, ok := lookup(EnvoyMemoryLimitEnv)
	if !ok || v == "" {
		return FallbackCapacity, fmt.Sprintf("%s unset: Envoy's memory limit unknown, hold capacity %d", EnvoyMemoryLimitEnv, FallbackCapacity)
	}
	limit, err := strconv.ParseInt(v, 10, 64)
	if err != nil || limit <= 0 {
		return FallbackCapacity, fmt.Sprintf("%s=%q is not a positive integer: hold capacity %d", EnvoyMemoryLimitEnv, clip(v), FallbackCapacity)
	}
	c := min(limit/4/bytesPerHold, maxCapacity)
	return int(c), fmt.Sprintf("%s=%d: a quarter of it at %d bytes per hold, hold capacity %d", EnvoyMemoryLimitEnv, limit, bytesPerHold, c)
}

// clip shortens a value quoted in a log line.
func clip(s string) string {
	const n = 64
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
