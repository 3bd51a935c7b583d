//go:build tools

// Package tools pins the Prometheus server the end-to-end tests query for
// phased-rollout checks, and the promtool that checks the monitoring kit's
// alert rules (hack/tools.sh prometheus, hack/tools.sh promtool).
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
