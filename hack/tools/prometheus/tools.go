//go:build tools

// Package tools pins the Prometheus server the end-to-end tests query for
// phased-rollout checks (hack/tools.sh prometheus).
package tools

import _ "github.com/prometheus/prometheus/cmd/prometheus"
