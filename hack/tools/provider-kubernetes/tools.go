//go:build tools

// Package tools pins provider-kubernetes v0.17.1, the newest release the Go
// module proxy builds, outside the project's go.mod (hack/tools.sh
// provider-kubernetes). Its CRDs (package/crds) come from the same module
// (hack/tools.sh provider-kubernetes-crds).
package tools

import _ "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
