//go:build tools

// Package tools pins Crossplane core, the engine behind `crossplane render`
// and the controller of the end-to-end tests, outside the project's go.mod.
package tools

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
