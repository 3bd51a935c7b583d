//go:build tools

// Package tools pins golangci-lint, which `make lint` runs over the whole
// module, outside the project's own go.mod so its many dependencies never
// touch the function's build.
package tools

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
