package instance_test

import (
	"testing"
)

// The objects an instance "demo" in namespace "firebolt" composes by
// default, written out as the original operator's §6.2 describes them.

func wantPostgresSecret(t *testing.T, pw string) obj {
	return parse(t, `
apiVersion: v1
kind: Secret
metadata:
  name: demo-metadata-postgres-creds
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: postgres}
type: Opaque
data:
  username: ZmlyZWJvbHQ=             # firebolt
  database: ZmlyZWJvbHRfbWV0YWRhdGE= # firebolt_metadata
`).with(t, "data.password", b64(pw))
}

func wantPostgresStatefulSet(t *testing.T) obj {
	return parse(t, `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: demo-metadata-pg
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: postgres}
spec:
  replicas: 1
  serviceName: demo-metadata-pg
  selector:
    matchLabels: {firebolt.io/instance: demo, firebolt.io/component: postgres}
  template:
    metadata:
      labels: {firebolt.io/instance: demo, firebolt.io/component: postgres}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 70
        runAsGroup: 70
        fsGroup: 70
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: postgresql
        image: postgres:16-alpine
        ports:
        - {name: tcp-postgresql, containerPort: 5432, protocol: TCP}
        env:
        - name: POSTGRES_USER
          valueFrom: {secretKeyRef: {name: demo-metadata-postgres-creds, key: username}}
        - name: POSTGRES_PASSWORD
          valueFrom: {secretKeyRef: {name: demo-metadata-postgres-creds, key: password}}
        - name: POSTGRES_DB
          valueFrom: {secretKeyRef: {name: demo-metadata-postgres-creds, key: database}}
        - {name: PGDATA, value: /var/lib/postgresql/data/pgdata}
        resources:
          requests: {cpu: 25m, memory: 64Mi}
          limits: {cpu: 250m, memory: 256Mi}
        readinessProbe:
          tcpSocket: {port: 5432}
          initialDelaySeconds: 1
          periodSeconds: 5
        livenessProbe:
          exec: {command: [pg_isready, -U, firebolt]}
          initialDelaySeconds: 5
          periodSeconds: 10
        securityContext:
          runAsNonRoot: true
          runAsUser: 70
          readOnlyRootFilesystem: true
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
        volumeMounts:
        - {name: data, mountPath: /var/lib/postgresql/data}
        - {name: run-postgresql, mountPath: /var/run/postgresql}
        - {name: tmp, mountPath: /tmp}
      volumes:
      - {name: run-postgresql, emptyDir: {}}
      - {name: tmp, emptyDir: {}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  volumeClaimTemplates:
  - metadata:
      name: data
      labels: {firebolt.io/instance: demo, firebolt.io/component: postgres}
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests: {storage: 10Gi}
`)
}

func wantPostgresService(t *testing.T) obj {
	return parse(t, `
apiVersion: v1
kind: Service
metadata:
  name: demo-metadata-pg
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: postgres}
spec:
  clusterIP: None
  selector: {firebolt.io/instance: demo, firebolt.io/component: postgres}
  ports:
  - {name: tcp-postgresql, port: 5432, targetPort: 5432, protocol: TCP}
`)
}

// wantLegacyConfig is config.yaml for the internal PostgreSQL.
func wantLegacyConfig(id string) string {
	return `pensieve_lite:
  default_account_id: ` + id + `
  host: 0.0.0.0
  log_level: information
  metadata_storage:
    garbage_collection:
      enabled: true
      interval_ms: 3600000
      time_horizon_sec: 86400
    postgresql:
      connect_timeout_sec: 5
      database: firebolt_metadata
      host: demo-metadata-pg.firebolt.svc.cluster.local
      keepalive:
        count: 5
        enabled: 1
        idle_sec: 120
        interval_sec: 30
      port: 5432
      schema: public
  port: 7000
  server_threads: 0
`
}

func wantMetadataConfigMap(t *testing.T, config string) obj {
	return parse(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-metadata-config
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: metadata}
`).with(t, "data", map[string]any{"config.yaml": config})
}

// wantMetadataDeployment is the metadata Deployment on the internal
// PostgreSQL; callers adjust the hash and what their case changes.
func wantMetadataDeployment(t *testing.T, hash string) obj {
	return parse(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo-metadata
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: metadata}
spec:
  replicas: 1
  selector:
    matchLabels: {firebolt.io/instance: demo, firebolt.io/component: metadata}
  strategy:
    type: Recreate
  template:
    metadata:
      labels: {firebolt.io/instance: demo, firebolt.io/component: metadata}
    spec:
      terminationGracePeriodSeconds: 30
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 1111
        runAsGroup: 1111
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: metadata
        image: ghcr.io/firebolt-db/metadata:release-5.0.0-pre.0.20260815074041.524de236b514
        command: [/dedicated-pensieve, --config, /configs/config.yaml]
        ports:
        - {name: grpc, containerPort: 7000, protocol: TCP}
        env:
        - {name: POSTGRES_USERNAME_FILE, value: /secrets/postgres/username}
        - {name: POSTGRES_PASSWORD_FILE, value: /secrets/postgres/password}
        livenessProbe:
          tcpSocket: {port: 7000}
          initialDelaySeconds: 2
          periodSeconds: 10
          failureThreshold: 3
        readinessProbe:
          grpc: {port: 7000, service: ""}
          initialDelaySeconds: 2
          periodSeconds: 5
          failureThreshold: 3
        securityContext:
          runAsNonRoot: true
          runAsUser: 1111
          readOnlyRootFilesystem: true
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
        volumeMounts:
        - {name: config, mountPath: /configs, readOnly: true}
        - {name: postgres-creds, mountPath: /secrets/postgres, readOnly: true}
        - {name: tmp, mountPath: /tmp}
      volumes:
      - name: config
        configMap: {name: demo-metadata-config}
      - name: postgres-creds
        secret: {secretName: demo-metadata-postgres-creds}
      - {name: tmp, emptyDir: {}}
`).with(t, "spec.template.metadata.annotations", map[string]any{"firebolt.io/config-hash": hash})
}

func wantMetadataService(t *testing.T) obj {
	return parse(t, `
apiVersion: v1
kind: Service
metadata:
  name: demo-metadata
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: metadata}
spec:
  type: ClusterIP
  selector: {firebolt.io/instance: demo, firebolt.io/component: metadata}
  ports:
  - {name: grpc, port: 7000, targetPort: 7000, protocol: TCP}
`)
}

func wantGatewayConfigMap(t *testing.T, envoy string) obj {
	return parse(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-gateway-config
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
`).with(t, "data", map[string]any{"envoy.yaml": envoy})
}

const preStop = `exec 3<>/dev/tcp/127.0.0.1/9901 && printf 'POST /healthcheck/fail HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n' >&3; sleep 8`

// wantGatewayDeployment is the gateway Deployment with the defaults: two
// replicas, metrics on 9090, the operator's service account and the wake
// agent beside Envoy. The pod mounts no token; the agent's container alone
// gets a projected one, as the original's.
func wantGatewayDeployment(t *testing.T, envoy string) obj {
	return wantGatewayDeploymentWithoutWake(t, envoy).with(t,
		"spec.template.spec.containers[1]", parse(t, `
name: wake-agent
image: ghcr.io/firebolt-db/function-firebolt:v0.1.0
args: [wake-agent, --address=127.0.0.1:9902, --metrics-address=:9903]
env:
- name: POD_NAMESPACE
  valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}}
ports:
- {name: wake-metrics, containerPort: 9903, protocol: TCP}
resources:
  requests: {cpu: 10m, memory: 32Mi}
  limits: {memory: 256Mi}
lifecycle:
  preStop:
    sleep: {seconds: 12}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  capabilities: {drop: [ALL]}
volumeMounts:
- {name: wake-agent-token, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
`),
		"spec.template.spec.volumes[2]", parse(t, `
name: wake-agent-token
projected:
  sources:
  - serviceAccountToken: {path: token, expirationSeconds: 3600}
  - configMap:
      name: kube-root-ca.crt
      items: [{key: ca.crt, path: ca.crt}]
  - downwardAPI:
      items: [{path: namespace, fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}}]
`))
}

// wantGatewayDeploymentWithoutWake is the gateway Deployment of a gateway
// that runs no wake agent (a user's service account), its token not
// mounted.
func wantGatewayDeploymentWithoutWake(t *testing.T, envoy string) obj {
	return parse(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo-gateway
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
spec:
  replicas: 2
  selector:
    matchLabels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}
  template:
    metadata:
      labels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
    spec:
      serviceAccountName: demo-gateway
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: 15
      containers:
      - name: envoy
        image: envoyproxy/envoy:v1.37.2
        args: [envoy, -c, /etc/envoy/envoy.yaml]
        ports:
        - {name: http, containerPort: 8080, protocol: TCP}
        - {name: metrics, containerPort: 9090, protocol: TCP}
        lifecycle:
          preStop:
            exec:
              command: [/bin/bash, -c, PRESTOP]
        livenessProbe:
          httpGet: {path: /healthz, port: metrics}
          periodSeconds: 15
          timeoutSeconds: 3
          failureThreshold: 3
        readinessProbe:
          httpGet: {path: /healthz, port: metrics}
          periodSeconds: 2
          timeoutSeconds: 2
          failureThreshold: 2
        securityContext:
          runAsNonRoot: true
          runAsUser: 101
          readOnlyRootFilesystem: true
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
        volumeMounts:
        - {name: config-volume, mountPath: /etc/envoy, readOnly: true}
        - {name: tmp, mountPath: /tmp}
      volumes:
      - name: config-volume
        configMap:
          name: demo-gateway-config
          items:
          - {key: envoy.yaml, path: envoy.yaml}
      - {name: tmp, emptyDir: {}}
`).with(t,
		"spec.template.metadata.annotations", map[string]any{"firebolt.io/config-hash": configHash(envoy)},
		"spec.template.spec.containers[0].lifecycle.preStop.exec.command[2]", preStop,
	)
}

func wantGatewayService(t *testing.T) obj {
	return parse(t, `
apiVersion: v1
kind: Service
metadata:
  name: demo-gateway
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
spec:
  type: ClusterIP
  selector: {firebolt.io/instance: demo, firebolt.io/component: gateway}
  ports:
  - {name: http, port: 80, targetPort: 8080, protocol: TCP}
`)
}

func wantGatewayPDB(t *testing.T) obj {
	return parse(t, `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: demo-gateway
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
`)
}

func wantGatewayRBAC(t *testing.T) map[string]obj {
	return map[string]obj{
		"gateway-serviceaccount": parse(t, `
apiVersion: v1
kind: ServiceAccount
metadata:
  name: demo-gateway
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
`),
		"gateway-role": parse(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: demo-gateway
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
rules:
- apiGroups: [compute.firebolt.io]
  resources: [fireboltengines]
  verbs: [get, list, patch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
`),
		"gateway-rolebinding": parse(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: demo-gateway
  namespace: firebolt
  labels: {firebolt.io/instance: demo, firebolt.io/component: gateway}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: demo-gateway}
subjects:
- {kind: ServiceAccount, name: demo-gateway, namespace: firebolt}
`),
	}
}

// Groups of desired resources.

func wantPostgres(t *testing.T, pw string) map[string]obj {
	return map[string]obj{
		"postgres-credentials": wantPostgresSecret(t, pw),
		"postgres":             wantPostgresStatefulSet(t),
		"postgres-headless":    wantPostgresService(t),
	}
}

func wantMetadata(t *testing.T, config string, deployment obj) map[string]obj {
	return map[string]obj{
		"metadata-config":  wantMetadataConfigMap(t, config),
		"metadata":         deployment,
		"metadata-service": wantMetadataService(t),
	}
}

// wantInternalMetadata is the metadata service on the internal PostgreSQL
// of an instance whose id is id.
func wantInternalMetadata(t *testing.T, id string) map[string]obj {
	config := wantLegacyConfig(id)
	return wantMetadata(t, config, wantMetadataDeployment(t, configHash(config, "demo-metadata-postgres-creds", "")))
}

func wantGateway(t *testing.T) map[string]obj {
	envoy := envoyConfig(t, 0)
	return merge(map[string]obj{
		"gateway-config":  wantGatewayConfigMap(t, envoy),
		"gateway":         wantGatewayDeployment(t, envoy),
		"gateway-service": wantGatewayService(t),
		"gateway-pdb":     wantGatewayPDB(t),
	}, wantGatewayRBAC(t))
}
