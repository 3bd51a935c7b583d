//go:build tools

// Package tools pins controller-gen, which generates the deepcopy functions
// and the CRDs that hack/xrdgen turns into Crossplane XRDs, outside the
// project's own go.mod.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
