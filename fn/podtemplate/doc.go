// Package podtemplate holds the pod-template rules every composer shares:
// what a user template may set (Validate, and ValidateLayers for names a
// class and an engine template both use), which privileges it may ask for
// only when the function input's allow-list permits them
// (CheckPodSecurity, CheckHostPath, CheckServiceAccount), which Secrets it may not reach
// (ProtectedSecretRefs with the Protected predicate), how big the primary
// container may be (ResourceBounds), how the operator, class and engine
// layers combine into the rendered pod (Merge), and the content hash that
// rolls a new engine generation when a class template changes (Hash).
//
// Everything here is pure: no I/O, no clock, no randomness, inputs are never
// modified.
//
// # Error paths
//
// Errors carry the full field path from the path the caller passes in (for
// example field.NewPath("spec", "template")). Entries of lists whose items
// have a name are identified by that name, so a violation reads
//
//	spec.template.spec.containers[engine].command: Forbidden: operator-owned
//
// This holds for containers, initContainers, volumes, env and volumeMounts.
// An entry with an empty name, and entries of unnamed lists (envFrom,
// projected sources), are identified by index.
//
// # Merge
//
// Merge layers operator < class < engine. The operator layer is the pod the
// composer renders from its own constants; the class and engine layers are
// user templates that passed Validate. Per field:
//
//   - metadata labels and annotations: class, then engine on top, then the
//     operator's keys on top of both (the operator's keys are the reserved
//     firebolt.io/ ones, so a user can never detach a selector).
//   - pod fields the operator owns (terminationGracePeriodSeconds,
//     restartPolicy, activeDeadlineSeconds, hostname, hostnameOverride,
//     subdomain, hostNetwork, hostPID, hostIPC, shareProcessNamespace,
//     hostUsers, ephemeralContainers): operator only.
//   - other scalar and struct pod fields (serviceAccountName, affinity,
//     dnsConfig, priorityClassName, runtimeClassName, os, overhead,
//     pod-level resources, …): engine, else class, else operator, whole value.
//   - nodeSelector: key by key, engine over class over operator.
//   - list pod fields (imagePullSecrets, tolerations, hostAliases,
//     readinessGates, topologySpreadConstraints, schedulingGates,
//     resourceClaims, volumes, initContainers): operator's, then class's,
//     then engine's.
//   - containers: the operator's containers in their order (the primary is
//     merged in place), then class sidecars, then engine sidecars.
//   - pod securityContext: engine's whole value, else class's, else empty;
//     then every field still unset is taken from the operator's (this is how
//     the engine composer stamps fsGroup 3473 / OnRootMismatch).
//   - primary container, only the fields Rules allow: image and
//     imagePullPolicy, workingDir, terminationMessagePath/Policy: engine,
//     else class, else operator; resources, securityContext, lifecycle:
//     engine's whole value, else class's, else operator's; env, envFrom,
//     volumeMounts, volumeDevices, resizePolicy: operator's, then class's,
//     then engine's. When class and engine set the same env name both
//     entries are kept; the later (engine) one wins in the container.
//
// Entries that collide with an operator-owned name (reserved containers,
// reserved volumes and mounts, reserved env, the primary's name in
// initContainers) are left out of the merge. Validate rejects every one of
// them, so this only matters for input that skipped Validate; composers must
// validate both user layers first and refuse to render on any error.
//
// Which operator values are engine-specific is the caller's business: the
// engine composer passes an operator template with
// terminationGracePeriodSeconds 60, enableServiceLinks false,
// automountServiceAccountToken false, pod securityContext {fsGroup 3473,
// fsGroupChangePolicy OnRootMismatch} and no seccomp profile, the
// engine container (command, ports, probes, POD_INDEX and
// FB_AWS_EC2_METADATA_CLIENT_ENABLED env, operator mounts, default image and
// the hardened container securityContext), the optional engine-web sidecar,
// the operator volumes and the firebolt.io/engine and firebolt.io/generation
// labels. Forced values (ones a user may not even default, like the metadata
// pod's runAsNonRoot) are stamped by the caller after Merge.
package podtemplate
