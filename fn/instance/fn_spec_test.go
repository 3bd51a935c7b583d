package instance_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

const externalSpec = `
metadata:
  postgres:
    host: pg.db.example.com
    port: 6432
    database: firebolt
    schema: metadata
    credentialsSecretRef: {name: metadata-pg}
gateway: {}
`

func externalSecret(t *testing.T, data map[string]any) obj {
	return parse(t, `
apiVersion: v1
kind: Secret
metadata: {name: metadata-pg, namespace: firebolt, resourceVersion: "48213"}
type: Opaque
`).with(t, "data", data)
}

func wantExternalConfig() string {
	return `pensieve_lite:
  default_account_id: ` + derivedID + `
  host: 0.0.0.0
  log_level: information
  metadata_storage:
    garbage_collection:
      enabled: true
      interval_ms: 3600000
      time_horizon_sec: 86400
    postgresql:
      connect_timeout_sec: 5
      database: firebolt
      host: pg.db.example.com
      keepalive:
        count: 5
        enabled: 1
        idle_sec: 120
        interval_sec: 30
      port: 6432
      schema: metadata
  port: 7000
  server_threads: 0
`
}

func credentialsRequirement() map[string]*fnv1.ResourceSelector {
	ns := namespace
	return map[string]*fnv1.ResourceSelector{"postgres-credentials": {
		ApiVersion: "v1",
		Kind:       "Secret",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: "metadata-pg"},
		Namespace:  &ns,
	}}
}

func TestRunFunctionExternalPostgres(t *testing.T) {
	ok := map[string]any{"username": b64("fb"), "password": b64("s3cr3t-p1ease")}
	cases := map[string]struct {
		reason string
		req    func(t *testing.T) request
		want   func(t *testing.T) want
	}{
		"SecretOK": {
			reason: "No PostgreSQL objects; the Secret has both keys, so the metadata service mounts it and its config points at the external server. The Secret's resourceVersion is part of the pod hash so an in-place rotation restarts the service.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, externalSpec, ""), required: map[string][]obj{"postgres-credentials": {externalSecret(t, ok)}}}
			},
			want: func(t *testing.T) want {
				config := wantExternalConfig()
				dep := wantMetadataDeployment(t, configHash(config, "metadata-pg", "48213")).
					with(t, "spec.template.spec.volumes[1].secret.secretName", "metadata-pg")
				return want{
					status:       status("Provisioning", derivedID, false, false),
					resources:    merge(wantMetadata(t, config, dep), wantGateway(t)),
					requirements: credentialsRequirement(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "Provisioning", `waiting for Deployment "demo-metadata" to become available`),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"SecretNotFetchedYet": {
			reason: "On a call before Crossplane has fetched the Secret the function asks for it and waits, without a warning.",
			req:    func(t *testing.T) request { return request{xr: xr(t, externalSpec, "")} },
			want: func(t *testing.T) want {
				return want{
					status:       status("Provisioning", derivedID, false, false),
					resources:    wantGateway(t),
					requirements: credentialsRequirement(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "Provisioning", `waiting for Crossplane to fetch the PostgreSQL credentials Secret "metadata-pg"`),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"SecretMissing": {
			reason: "No Secret: the metadata service is not rendered, MetadataReady names the field and the namespace, one warning.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, externalSpec, ""), required: map[string][]obj{"postgres-credentials": nil}}
			},
			want: func(t *testing.T) want {
				msg := `PostgreSQL credentials Secret "metadata-pg" (spec.metadata.postgres.credentialsSecretRef.name) not found in namespace "firebolt"`
				return want{
					status:       status("Provisioning", derivedID, false, false),
					resources:    wantGateway(t),
					requirements: credentialsRequirement(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "PostgresSecretPreflightFailed", msg),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "PostgresSecretPreflightFailed", msg)},
					ttl:     provisioningTTL,
				}
			},
		},
		"SecretLostKeyWhileRunning": {
			reason: "The Secret lost its password while the service runs: the running metadata objects are returned unchanged (not deleted), the endpoint stays, the phase turns Degraded.",
			req: func(t *testing.T) request {
				config := wantExternalConfig()
				dep := wantMetadataDeployment(t, configHash(config, "metadata-pg", "48000")).
					with(t, "spec.template.spec.volumes[1].secret.secretName", "metadata-pg",
						"metadata.generation", 1,
						"status", map[string]any{"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1})
				gw := wantGateway(t)
				gw["gateway"] = gw["gateway"].with(t, "metadata.generation", 1,
					"status", map[string]any{"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2})
				return request{
					xr: xr(t, externalSpec, `
phase: Ready
id: `+derivedID+`
conditions:
- {type: MetadataReady, status: "True", reason: Ready}
- {type: GatewayReady, status: "True", reason: Ready}
`),
					observed: merge(wantMetadata(t, config, dep), gw),
					required: map[string][]obj{"postgres-credentials": {externalSecret(t, map[string]any{"username": b64("fb"), "password": ""})}},
				}
			},
			want: func(t *testing.T) want {
				config := wantExternalConfig()
				dep := wantMetadataDeployment(t, configHash(config, "metadata-pg", "48000")).
					with(t, "spec.template.spec.volumes[1].secret.secretName", "metadata-pg")
				res := merge(wantMetadata(t, config, dep), wantGateway(t))
				msg := `PostgreSQL credentials Secret "metadata-pg" (spec.metadata.postgres.credentialsSecretRef.name) has no non-empty key(s) "password"`
				return want{
					status:       status("Degraded", derivedID, true, true),
					resources:    res,
					readyRes:     allReady(keys(res)...),
					requirements: credentialsRequirement(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "PostgresSecretPreflightFailed", msg),
						cond("GatewayReady", true, "Ready", "gateway is available at "+gatewayEndpoint),
					},
					results: []*fnv1.Result{
						result(fnv1.Severity_SEVERITY_WARNING, "PostgresSecretPreflightFailed", msg),
						result(fnv1.Severity_SEVERITY_WARNING, "Degraded", "FireboltInstance is Degraded: MetadataReady: "+msg),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"SecretLacksBothKeys": {
			reason: "Every missing key is named.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, externalSpec, ""), required: map[string][]obj{"postgres-credentials": {externalSecret(t, map[string]any{"user": b64("fb")})}}}
			},
			want: func(t *testing.T) want {
				msg := `PostgreSQL credentials Secret "metadata-pg" (spec.metadata.postgres.credentialsSecretRef.name) has no non-empty key(s) "password", "username"`
				return want{
					status:       status("Provisioning", derivedID, false, false),
					resources:    wantGateway(t),
					requirements: credentialsRequirement(),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "PostgresSecretPreflightFailed", msg),
						cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
					},
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "PostgresSecretPreflightFailed", msg)},
					ttl:     provisioningTTL,
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := function(noPassword(t)).RunFunction(context.Background(), tc.req(t).build(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(t).build(t), withoutEngineState(t, rsp), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRunFunctionTemplates(t *testing.T) {
	provisioning := []*fnv1.Condition{
		cond("MetadataReady", false, "Provisioning", `waiting for Deployment "demo-metadata" to become available`),
		cond("GatewayReady", false, "Provisioning", `waiting for Deployment "demo-gateway" to become available`),
	}
	secretOnly := func(t *testing.T) map[string]obj {
		return map[string]obj{"postgres-credentials": observedSecret(t)}
	}
	// Only the observed Secret exists, so only it is ready.
	secretReady := allReady("postgres-credentials")
	cases := map[string]struct {
		reason string
		req    func(t *testing.T) request
		want   func(t *testing.T) want
	}{
		"AllowedFields": {
			reason: "Scheduling, pull secrets, labels, annotations, a sidecar and image, pull policy and resources on the primary containers are merged in; the operator's own fields stay; a custom metrics port moves the Envoy config and the metrics container port. The gateway's pod securityContext is the template's, unchanged: the operator adds no seccomp profile there, as the original.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, `
metadata:
  template:
    metadata:
      labels: {team: data}
    spec:
      nodeSelector: {pool: system}
      imagePullSecrets: [{name: registry}]
      containers:
      - name: metadata
        image: registry.example.com/firebolt/metadata:1.4.2
        imagePullPolicy: IfNotPresent
        resources:
          requests: {cpu: 250m, memory: 512Mi}
gateway:
  replicas: 3
  metricsPort: 9102
  template:
    metadata:
      annotations: {prometheus.io/scrape: "true"}
    spec:
      securityContext: {runAsNonRoot: true}
      tolerations: [{key: dedicated, operator: Equal, value: gateway, effect: NoSchedule}]
      containers:
      - name: envoy
        resources:
          limits: {memory: 1Gi}
      - name: log-shipper
        image: fluent/fluent-bit:3.0
        volumeMounts: [{name: tmp, mountPath: /logs, readOnly: true}]
`, ""), observed: secretOnly(t)}
			},
			want: func(t *testing.T) want {
				config := wantLegacyConfig(derivedID)
				meta := wantMetadataDeployment(t, configHash(config, "demo-metadata-postgres-creds", "")).with(t,
					"spec.template.metadata.labels.team", "data",
					"spec.template.spec.nodeSelector", map[string]any{"pool": "system"},
					"spec.template.spec.imagePullSecrets", []any{map[string]any{"name": "registry"}},
					"spec.template.spec.containers[0].image", "registry.example.com/firebolt/metadata:1.4.2",
					"spec.template.spec.containers[0].imagePullPolicy", "IfNotPresent",
					"spec.template.spec.containers[0].resources", map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "512Mi"}},
				)
				envoy := envoyConfig(t, 9102)
				gw := merge(wantGateway(t), map[string]obj{
					"gateway-config": wantGatewayConfigMap(t, envoy),
					"gateway": wantGatewayDeployment(t, envoy).with(t,
						"spec.replicas", 3,
						"spec.template.metadata.annotations[prometheus.io/scrape]", "true",
						"spec.template.spec.securityContext", map[string]any{"runAsNonRoot": true},
						"spec.template.spec.tolerations", []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "gateway", "effect": "NoSchedule"}},
						"spec.template.spec.containers[0].ports[1].containerPort", 9102,
						"spec.template.spec.containers[0].resources", map[string]any{"limits": map[string]any{"memory": "1Gi"}},
						// Envoy has a memory limit, so the wake agent learns it.
						"spec.template.spec.containers[1].env[1]", map[string]any{"name": "ENVOY_MEMORY_LIMIT_BYTES", "valueFrom": map[string]any{
							"resourceFieldRef": map[string]any{"containerName": "envoy", "resource": "limits.memory", "divisor": "1"}}},
						"spec.template.spec.containers[2]", map[string]any{
							"name": "log-shipper", "image": "fluent/fluent-bit:3.0",
							"volumeMounts": []any{map[string]any{"name": "tmp", "mountPath": "/logs", "readOnly": true}},
						},
					),
				})
				res := merge(wantPostgres(t, password), wantMetadata(t, config, meta), gw)
				return want{
					status:     status("Provisioning", derivedID, false, false),
					resources:  res,
					readyRes:   secretReady,
					conditions: []*fnv1.Condition{cond("MetadataReady", false, "Provisioning", `waiting for PostgreSQL StatefulSet "demo-metadata-pg" to become ready and Deployment "demo-metadata" to become available`), provisioning[1]},
					ttl:        provisioningTTL,
				}
			},
		},
		"UserServiceAccount": {
			reason: "A user service account on the gateway: no ServiceAccount, Role or RoleBinding, no wake agent (its Lua hook and cluster gone too), the token mount left to the user's account, and a WakeOnZero warning.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, `{metadata: {}, gateway: {template: {spec: {serviceAccountName: firebolt-gateway}}}}`, ""), observed: secretOnly(t)}
			},
			want: func(t *testing.T) want {
				envoy := envoyConfigWake(t, 0, false)
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID), map[string]obj{
					"gateway-config": wantGatewayConfigMap(t, envoy),
					"gateway": wantGatewayDeploymentWithoutWake(t, envoy).with(t,
						"spec.template.spec.serviceAccountName", "firebolt-gateway",
						"spec.template.spec.automountServiceAccountToken", nil),
					"gateway-service": wantGatewayService(t),
					"gateway-pdb":     wantGatewayPDB(t),
				})
				return want{
					status:    status("Provisioning", derivedID, false, false),
					resources: res,
					readyRes:  secretReady,
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "Provisioning", `waiting for PostgreSQL StatefulSet "demo-metadata-pg" to become ready and Deployment "demo-metadata" to become available`), provisioning[1],
						cond("WakeOnZero", false, "WakeOnZeroDisabled", `spec.gateway.template.spec.serviceAccountName names "firebolt-gateway": the gateway runs no wake agent, so a query for an auto-stopped engine is not held and does not wake it`),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"MetadataNG": {
			reason: "metadataNG renders the metadata-ng config (account id and schema included, as the original) and runs the pod as UID/GID 1112; the image stays.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, `{metadataNG: true, metadata: {}, gateway: {}}`, ""), observed: secretOnly(t)}
			},
			want: func(t *testing.T) want {
				config := `pensieve_lite:
  default_account_id: ` + derivedID + `
  host: 0.0.0.0
  metadata_storage:
    postgresql:
      database: firebolt_metadata
      host: demo-metadata-pg.firebolt.svc.cluster.local
      port: 5432
      schema: public
  port: 7000
`
				dep := wantMetadataDeployment(t, configHash(config, "demo-metadata-postgres-creds", "")).with(t,
					"spec.template.spec.securityContext.runAsUser", 1112,
					"spec.template.spec.securityContext.runAsGroup", 1112,
					"spec.template.spec.containers[0].securityContext.runAsUser", 1112)
				res := merge(wantPostgres(t, password), wantMetadata(t, config, dep), wantGateway(t))
				return want{
					status:     status("Provisioning", derivedID, false, false),
					resources:  res,
					readyRes:   secretReady,
					conditions: []*fnv1.Condition{cond("MetadataReady", false, "Provisioning", `waiting for PostgreSQL StatefulSet "demo-metadata-pg" to become ready and Deployment "demo-metadata" to become available`), provisioning[1]},
					ttl:        provisioningTTL,
				}
			},
		},
		"MetadataTemplateViolationWhileRunning": {
			reason: "A metadata template the rules reject (a reserved volume, the PostgreSQL password handed to a sidecar): MetadataReady False/TemplateRejected with every field path, the running metadata objects returned unchanged, PostgreSQL and gateway rendered, phase Degraded.",
			req: func(t *testing.T) request {
				o := observedRunning(t)
				return request{xr: xr(t, `
metadata:
  template:
    spec:
      volumes: [{name: config, emptyDir: {}}]
      containers:
      - name: debug
        image: busybox:1.36
        env:
        - name: PGPASSWORD
          valueFrom: {secretKeyRef: {name: demo-metadata-postgres-creds, key: password}}
gateway: {}
`, `{phase: Ready, id: `+derivedID+`, conditions: [{type: MetadataReady, status: "True", reason: Ready}]}`), observed: o}
			},
			want: func(t *testing.T) want {
				o := observedRunning(t)
				res := merge(wantPostgres(t, password), wantGateway(t), map[string]obj{
					"metadata-config":  frozenObj(t, o["metadata-config"]),
					"metadata":         frozenObj(t, o["metadata"]),
					"metadata-service": frozenObj(t, o["metadata-service"]),
				})
				msg := `spec.metadata.template is rejected: spec.metadata.template.spec.volumes[config]: Forbidden: reserved name: rendered by the operator; ` +
					`spec.metadata.template.spec.containers[debug].env[PGPASSWORD].valueFrom.secretKeyRef.name: Forbidden: Secret "demo-metadata-postgres-creds" is operator-protected and may not be referenced`
				return want{
					status:    status("Degraded", derivedID, true, true),
					resources: res,
					readyRes:  allReady(keys(res)...),
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "TemplateRejected", msg),
						cond("GatewayReady", true, "Ready", "gateway is available at "+gatewayEndpoint),
					},
					results: []*fnv1.Result{
						result(fnv1.Severity_SEVERITY_WARNING, "TemplateRejected", msg),
						result(fnv1.Severity_SEVERITY_WARNING, "Degraded", "FireboltInstance is Degraded: MetadataReady: "+msg),
					},
					ttl: provisioningTTL,
				}
			},
		},
		"GatewayTemplateViolationFirstReconcile": {
			reason: "A gateway template the rules reject, before anything exists: no gateway object is created, the rest is.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, `
metadata: {}
gateway:
  template:
    metadata:
      labels: {firebolt.io/instance: other}
    spec:
      initContainers: [{name: wake-agent, image: busybox:1.36}]
`, ""), observed: secretOnly(t)}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID))
				msg := `spec.gateway.template is rejected: spec.gateway.template.metadata.labels[firebolt.io/instance]: Forbidden: keys with the "firebolt.io/" prefix are reserved for the operator; ` +
					`spec.gateway.template.spec.initContainers[wake-agent]: Forbidden: reserved name: container added by the operator`
				return want{
					status:    status("Provisioning", derivedID, false, false),
					resources: res,
					readyRes:  secretReady,
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "Provisioning", `waiting for PostgreSQL StatefulSet "demo-metadata-pg" to become ready and Deployment "demo-metadata" to become available`),
						cond("GatewayReady", false, "TemplateRejected", msg),
					},
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "TemplateRejected", msg)},
					ttl:     provisioningTTL,
				}
			},
		},
		"MetricsPortCollides": {
			reason: "A metrics port Envoy cannot bind (the client listener's) is reported on GatewayReady as EnsureFailed with the field path; no gateway object is created.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, `{metadata: {}, gateway: {metricsPort: 8080}}`, ""), observed: secretOnly(t)}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID))
				msg := `invalid gateway parameters: spec.gateway.metricsPort: Invalid value: 8080: must differ from the gateway's listener port 8080 and admin port 9901`
				return want{
					status:    status("Provisioning", derivedID, false, false),
					resources: res,
					readyRes:  secretReady,
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "Provisioning", `waiting for PostgreSQL StatefulSet "demo-metadata-pg" to become ready and Deployment "demo-metadata" to become available`),
						cond("GatewayReady", false, "EnsureFailed", msg),
					},
					results: []*fnv1.Result{result(fnv1.Severity_SEVERITY_WARNING, "EnsureFailed", msg)},
					ttl:     provisioningTTL,
				}
			},
		},
		"RejectionAlreadyReported": {
			reason: "A rejection the composite already carries is not announced again.",
			req: func(t *testing.T) request {
				return request{xr: xr(t, `{metadata: {}, gateway: {metricsPort: 8080}}`,
					`{phase: Provisioning, id: `+derivedID+`, conditions: [{type: GatewayReady, status: "False", reason: EnsureFailed}]}`), observed: secretOnly(t)}
			},
			want: func(t *testing.T) want {
				res := merge(wantPostgres(t, password), wantInternalMetadata(t, derivedID))
				return want{
					status:    status("Provisioning", derivedID, false, false),
					resources: res,
					readyRes:  secretReady,
					conditions: []*fnv1.Condition{
						cond("MetadataReady", false, "Provisioning", `waiting for PostgreSQL StatefulSet "demo-metadata-pg" to become ready and Deployment "demo-metadata" to become available`),
						cond("GatewayReady", false, "EnsureFailed", `invalid gateway parameters: spec.gateway.metricsPort: Invalid value: 8080: must differ from the gateway's listener port 8080 and admin port 9901`),
					},
					ttl: provisioningTTL,
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, err := function(noPassword(t)).RunFunction(context.Background(), tc.req(t).build(t))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(t).build(t), withoutEngineState(t, rsp), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRunFunctionWithoutClaim: without claim labels nothing can be named
// or placed. Like every composer, the instance keeps what exists unchanged
// and says why in a condition, rather than failing the pipeline.
func TestRunFunctionWithoutClaim(t *testing.T) {
	x := xr(t, defaultSpec, `{phase: Ready, id: `+derivedID+`}`).with(t, "metadata.labels", nil)
	o := observedRunning(t)
	rsp, err := function(noPassword(t)).RunFunction(context.Background(), request{xr: x, observed: o}.build(t))
	if err != nil {
		t.Fatal(err)
	}
	msg := "composite demo-m4x8t has no crossplane.io/claim-name and crossplane.io/claim-namespace labels: create instances through a FireboltInstance claim"
	res := map[string]obj{}
	for n, v := range o {
		res[n] = frozenObj(t, v)
	}
	w := want{
		status:     obj{"phase": "Ready", "id": derivedID, "metadataReady": false, "gatewayReady": false},
		resources:  res,
		readyRes:   allReady(keys(res)...),
		conditions: []*fnv1.Condition{cond("MetadataReady", false, "ClaimLabelsMissing", msg), cond("GatewayReady", false, "ClaimLabelsMissing", msg)},
		omitAuth:   true,
		ttl:        stableTTL,
	}.build(t)
	// Without the claim's name there is no claim to ask for.
	w.Requirements = nil
	if diff := cmp.Diff(w, rsp, protocmp.Transform()); diff != "" {
		t.Errorf("an XR without claim labels keeps what exists and says why: -want, +got:\n%s", diff)
	}
}
