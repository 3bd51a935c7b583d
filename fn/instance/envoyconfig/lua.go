package envoyconfig

import (
	"strconv"

	_ "embed"
)

//go:embed route.lua
var routeLua string

// luaSource is the Lua filter's script for an instance: lines binding the
// authority suffix and the wake agent's cluster (nil without an agent) and
// timeout, then route.lua unchanged. The suffix is built from a validated
// DNS label and subdomain and a number, so it holds only [a-z0-9.-:] and
// Go's quoting is also valid Lua quoting.
func luaSource(p Params) string {
	agent := "nil"
	if p.WakeAgent {
		agent = strconv.Quote(wakeAgentClusterName)
	}
	return "local engine_authority_suffix = " + strconv.Quote(engineAuthoritySuffix(p)) + "\n" +
		"local wake_agent_cluster = " + agent + "\n" +
		"local wake_hold_timeout_ms = " + strconv.FormatInt(WakeHoldTimeout.Milliseconds(), 10) + "\n" +
		routeLua
}
