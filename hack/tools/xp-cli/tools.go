//go:build tools

// Package tools pins the Crossplane CLI (render, resource validate, xpkg)
// outside the project's own go.mod.
package tools

import _ "github.com/crossplane/cli/v2/cmd/crossplane"
