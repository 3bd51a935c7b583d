package envoyconfig

import (
	"strconv"
	"strings"

	_ "embed"
)

// The Lua filter's script is route.lua (engine selection, the wake agent
// hold) followed by one entry point: entry.lua pins a request to
// <engine>-service over the one plain engine cluster; entry_upstream.lua
// also picks the engine's Service and cluster from engine_routes and
// names the cluster in upstreamClusterHeader. route.lua and entry.lua are
// the script as it was before upstream TLS existed, split where the entry
// point begins: an instance with the zero Upstream still renders it byte
// for byte, so upgrading the function rolls no gateway.
var (
	//go:embed route.lua
	routeLua string
	//go:embed entry.lua
	entryLua string
	//go:embed entry_upstream.lua
	entryUpstreamLua string
)

// luaSource is the Lua filter's script for an instance: lines binding the
// authority suffix and the wake agent's cluster (nil without an agent) and
// timeout, with upstream routing the lines binding its Service suffix,
// default cluster and routes, then the script. Every value bound is built
// from validated DNS labels and subdomains, cluster names and numbers, so
// it holds only [a-z0-9._:-] and Go's quoting is also valid Lua quoting.
func luaSource(p Params) string {
	agent := "nil"
	if p.WakeAgent {
		agent = strconv.Quote(wakeAgentClusterName)
	}
	head := "local engine_authority_suffix = " + strconv.Quote(engineAuthoritySuffix(p)) + "\n" +
		"local wake_agent_cluster = " + agent + "\n" +
		"local wake_hold_timeout_ms = " + strconv.FormatInt(WakeHoldTimeout.Milliseconds(), 10) + "\n"
	if !p.Upstream.routed() {
		return head + routeLua + "\n" + entryLua
	}
	return head + upstreamPreamble(p) + routeLua + "\n" + entryUpstreamLua
}

// upstreamPreamble binds service_authority_suffix (what follows a Service
// name in :authority), default_upstream_cluster and engine_routes, one
// line per route in the routes' (validated, sorted) order.
func upstreamPreamble(p Params) string {
	var b strings.Builder
	b.WriteString("local service_authority_suffix = " + strconv.Quote(serviceAuthoritySuffix(p)) + "\n")
	b.WriteString("local default_upstream_cluster = " + strconv.Quote(p.Upstream.defaultCluster()) + "\n")
	routes := p.Upstream.effectiveRoutes()
	if len(routes) == 0 {
		b.WriteString("local engine_routes = {}\n")
		return b.String()
	}
	b.WriteString("local engine_routes = {\n")
	for _, r := range routes {
		b.WriteString("  [" + strconv.Quote(r.Engine) + "] = {service = " + strconv.Quote(r.Service) +
			", cluster = " + strconv.Quote(protocolCluster(r.TLS)) + "},\n")
	}
	b.WriteString("}\n")
	return b.String()
}
