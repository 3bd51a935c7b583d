// Package e2e proves the product on a real local control plane: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and KWOK built from
// source at pinned versions, Crossplane core with the External package
// runtime, and the project's Configuration and Function installed from their
// .xpkg files the way a user installs them. It runs in plain `go test ./...`.
//
// # How a run goes
//
// go test starts the test binary. Its TestMain, finding itself in the host's
// network namespace, builds what is missing while it can still reach the Go
// module proxy (hack/tools.sh puts the tools in a cache outside the
// repository, so a warm machine skips this; the function and both packages
// are built from this tree every run, for the loopback registry the
// Configuration's dependency then names), and runs itself again with the same
// flags in a new network namespace (CLONE_NEWNET as root; as another user
// with a user namespace too, in which it is root). It exits with that copy's
// status. The environment variable harness.EnvInNetns marks the copy;
// harness.EnvTools carries the built paths to it.
//
// The copy brings its loopback up and puts the pod range (10.244.0.0/16) and
// the service range (10.96.0.0/16) on it, so every pod IP and ClusterIP is a
// local address that exists only in this namespace. Then harness.Start brings
// up the stack, all on loopback:
//
//   - etcd, kube-apiserver (certificates made in Go), kube-controller-manager,
//     kube-scheduler, and KWOK with one simulated node. KWOK makes pods
//     Running and Ready and gives them IPs from the pod range. The harness
//     plays a volume provisioner for the default StorageClass, so the
//     PostgreSQL StatefulSet's claim binds.
//   - cert-manager v1.21.1, as an administrator installs it before the
//     Configuration: its CRDs, and its own controllers for Certificates,
//     Issuers, ClusterIssuers and SelfSigned and CA CertificateRequests as one
//     process (hack/tools/cert-manager-kwok, with --enable-certificate-owner-ref;
//     no webhook, so nothing validates or defaults cert-manager objects on
//     admission, and no cainjector). It binds only 127.0.0.1:9402 (metrics)
//     and 127.0.0.1:9403 (/readyz), so it shares this namespace. A SelfSigned ClusterIssuer issues a CA Certificate in
//     namespace cert-manager, whose Secret backs the CA ClusterIssuer
//     internal-ca (harness.CAIssuer): a Certificate it issues gets ca.crt.
//     Start waits until internal-ca is Ready.
//   - crossplane core init and core start with --package-runtime=External and
//     its webhooks on: the Usage webhook refuses deleting a class in use. The
//     API server reaches it through a Service whose ClusterIP is local here.
//     Crossplane runs as its own service account with the ClusterRoles of its
//     Helm chart plus every aggregate-to-crossplane ClusterRole (deploy/rbac.yaml
//     and those the RBAC manager, also running, makes per XRD): an RBAC gap in
//     deploy/ fails here as it would in a cluster.
//   - kubectl apply -f deploy/, then the function as a local process with mTLS:
//     its server certificate is signed by the root CA core init made, which
//     also signed Crossplane's client certificate. It calls the API server with
//     a token of the service account deploy/ binds, not as admin.
//   - an OCI registry in the test process on 127.0.0.1:5000; `crossplane xpkg
//     push` of both packages; `crossplane xpkg install configuration`.
//     Crossplane resolves the Function dependency. The harness plays the
//     package runtime: for each active FunctionRevision it publishes the TLS
//     server Secret and the endpoint 127.0.0.1:9443, and RuntimeHealthy from a
//     real mTLS handshake with the function process.
//   - provider-kubernetes, the Configuration's other dependency, as a user
//     with a mirror installs it: its package (built from its module's
//     package/) is pushed to 127.0.0.1:5000/crossplane-contrib, and an
//     ImageConfig's rewriteImage sends Crossplane there while crossplane.yaml
//     keeps naming xpkg.crossplane.io. The harness plays the runtime for its
//     ProviderRevision (harness/provider.go: the runtime config deploy/
//     selects, TLS Secrets, webhook Service, a replica-less Deployment whose
//     service account the RBAC manager binds) and runs the provider binary,
//     as that service account, in a network namespace of its own under a
//     bridge (harness/bridge.go): it binds :8080 and :9443, which the RBAC
//     manager and the function hold here. The ProviderConfig "default"
//     hands it the same identity as a kubeconfig Secret (no pod, so no
//     InjectedIdentity).
//   - harness.FakePods: one HTTP server per pod IP on :9090 serving
//     firebolt_running_queries and firebolt_suspended_queries, idle unless a
//     test makes a pod busy, failing (500), hanging, or down. pods/proxy
//     reaches them as it would reach an engine.
//
// Nothing can reach an address outside the machine: the namespace has no
// other interface.
//
// # Scenarios
//
// Each scenario is a test in its own namespace, and they run in parallel
// (the copy raises -test.parallel unless it is given), except the crash
// scenario: it SIGKILLs Crossplane and the function, which serve every
// scenario, so it runs alone before the others start. The fake engine pods
// check their own premises on every sync: a pod IP held by two live pods is
// never served (its answer could be the other pod's) and, like the node
// leaving Ready, fails every scenario it touches. Claims are applied with
// server-side apply, as kubectl apply --server-side would. Every wait is
// bounded and reports what it last saw; a failing scenario prints its
// namespace's objects and events, and what Crossplane and the function logged
// while it ran. KWOK's pod-ready stage skips pods labelled harness.HoldLabel,
// which lets a test hold a new generation's pods not Ready and release them.
//
// FIREBOLT_E2E_KEEP=1 keeps the work directory (logs of every process,
// certificates, etcd data) of a passing run too; a failing run always keeps
// it.
//
// # make up
//
// cmd/localcp runs the same harness for a person. Its stack lives in a private
// network namespace as well, for the same reason (pod IPs must be local to
// the API server and to nothing else), and the API server is made usable from
// the host's shell through a Unix socket: a detached process in the host's
// namespace listens on 127.0.0.1:<port> and forwards to the socket; inside,
// the stack's side forwards the socket to the API server. The API server's
// certificate names 127.0.0.1, so the printed kubeconfig verifies it.
package e2e
