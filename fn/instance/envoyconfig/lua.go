package envoyconfig

import (
	_ "embed"
	"strconv"
)

//go:embed route.lua
var routeLua string

// luaSource is the Lua filter's script for an instance: one line binding the
// authority suffix, then route.lua unchanged. The suffix is built from a
// validated DNS label and subdomain and a number, so it holds only
// [a-z0-9.-:] and Go's quoting is also valid Lua quoting.
func luaSource(p Params) string {
	return "local engine_authority_suffix = " + strconv.Quote(engineAuthoritySuffix(p)) + "\n" + routeLua
}
