//go:build tools

// Package tools pins the Prometheus Operator's API types, from which
// hack/tools.sh prometheus-operator-crds generates its CRDs (PodMonitor,
// PrometheusRule, ...) with controller-gen, as the operator generates them:
// the module that ships the CRD files is not served by the module proxy.
// The tests validate deploy/monitoring against them.
package tools

import _ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
