// Package wakeagent is the gateway's wake agent: the sidecar that holds a
// request for a stopped engine until the engine is back, and asks for it
// to be woken.
//
// Envoy's Lua filter calls GET /hold?engine=<name> on the agent's loopback
// listener as the last step before routing. The agent answers at once when
// the engine has a ready endpoint (or when it cannot know yet), and
// otherwise stamps the FireboltEngine claim's firebolt.io/wake-requested
// annotation, which the composition function reads as demand, and parks
// the request until the engine's EndpointSlices show a ready endpoint or
// the hold times out. Every /hold answer names its decision in the
// x-firebolt-wake-decision header; Lua honours a non-200 only when the
// header is present, so an unreachable agent routes traffic through.
//
// Bounds. Nothing the agent keeps grows with traffic:
//   - demand is tracked for at most MaxTrackedEngines (4096) engine names,
//     each kept for DemandRetention (10 min) after its last demand, pruned
//     by a ticker, never while the engine has held requests. Demand beyond
//     the bound is counted in firebolt_gateway_wake_demand_dropped_total
//     and still stamps the claim;
//   - the per-engine metrics (pending holds, shed requests, last demand)
//     carry an engine label only for engines in that map, and the label
//     values are deleted with the entry, so there are at most 4096 series
//     of each;
//   - the stamp rate limiter remembers at most MaxTrackedEngines names;
//   - a held request is the only goroutine per request, and holds are
//     capped (see Capacity): past the cap a request is shed with a 503.
package wakeagent
