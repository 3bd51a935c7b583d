// Package toolversions keeps the tool wrappers that compile Kubernetes'
// client libraries (hack/tools/kube, cert-manager-kwok and prometheus) on the
// project's version of every module they share with it. Go compiles a
// package once for all of them only when its module version and every
// dependency's agree, so one differing version under client-go compiles it,
// and everything above it, again in a cold make setup (docs/development.md).
package toolversions
