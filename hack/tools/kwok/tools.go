//go:build tools

// Package tools pins KWOK, the simulated nodes of the end-to-end tests, outside
// the project's go.mod. Its stage files (kustomize/stage) come from the same
// module; hack/tools.sh concatenates the ones the tests need.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
