//go:build tools

// Package tools pins the Kubernetes control plane of the end-to-end tests
// (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl) outside
// the project's go.mod.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
