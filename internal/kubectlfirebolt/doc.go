// Package kubectlfirebolt is `kubectl firebolt`, the plugin for people who
// run this product's claims (FireboltInstance, FireboltEngine): the
// original operator's commands (instance and engine list, create, delete,
// port-forward, version) and the ones a Crossplane-composed engine needs
// (engine wait, wake and status, instance id). It talks to the API server
// with client-go only, never through a kubectl binary.
//
// Every top-level command lives in a file of its own and registers itself
// (register), so a new one is added by adding one file. Run is the whole
// program with its I/O passed in, so tests drive it in-process against
// fake clients or a real API server.
package kubectlfirebolt
