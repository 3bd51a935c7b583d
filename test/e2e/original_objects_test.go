package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// originalManager is the original operator's server-side apply field
// manager.
const originalManager = "firebolt-operator"

// createOriginal makes, in namespace ns, what the original runs for an
// instance demo with internal PostgreSQL (account id) and the engines of
// originalEngines: the custom resources with their finalizers and status,
// then every object the original makes, owned by them.
func createOriginal(ctx context.Context, c *harness.Cluster, ns, id string) error {
	if err := createNamespace(ctx, c, ns); err != nil {
		return err
	}
	instUID, err := createCR(ctx, c, origInsts, fmt.Sprintf(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: demo, namespace: %s, finalizers: [compute.firebolt.io/instance-cleanup], labels: {team: data}}
spec: {id: %s, metadata: {}, gateway: {}}
`, ns, id), map[string]any{"phase": "Ready", "metadataReady": true, "gatewayReady": true,
		"metadataEndpoint": "demo-metadata." + ns + ".svc.cluster.local:7000", "gatewayEndpoint": "demo-gateway." + ns + ".svc.cluster.local"})
	if err != nil {
		return err
	}
	for _, y := range instanceObjects(ns) {
		if err := createOwned(ctx, c, y, "FireboltInstance", "demo", instUID); err != nil {
			return err
		}
	}
	for _, e := range originalEngines {
		uid, err := createCR(ctx, c, origEngines, fmt.Sprintf(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: %s, namespace: %s, finalizers: [compute.firebolt.io/engine-cleanup]}
spec: {instanceRef: demo, replicas: %d}
`, e.name, ns, e.replicas), map[string]any{"phase": "stable", "currentGeneration": e.gen, "activeGeneration": e.gen, "observedGeneration": 1})
		if err != nil {
			return err
		}
		for _, y := range engineObjects(ns, id, e) {
			if err := createOwned(ctx, c, y, "FireboltEngine", e.name, uid); err != nil {
				return err
			}
		}
	}
	original.Lock()
	original.ids[ns] = id
	original.Unlock()
	return nil
}

// createCR creates one of the original's custom resources and writes its
// status, as the original does, and returns its UID.
func createCR(ctx context.Context, c *harness.Cluster, r schema.GroupVersionResource, y string, status map[string]any) (types.UID, error) {
	u, err := objectYAML(y)
	if err != nil {
		return "", err
	}
	created, err := c.Dyn.Resource(r).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{FieldManager: originalManager})
	if err != nil {
		return "", errors.Wrapf(err, "cannot create %s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	created.Object["status"] = status
	if _, err := c.Dyn.Resource(r).Namespace(u.GetNamespace()).UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: originalManager}); err != nil {
		return "", errors.Wrapf(err, "cannot write the status of %s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	return created.GetUID(), nil
}

// setOriginalStatus merges fields into the status of one custom resource
// (nil deletes one).
func setOriginalStatus(ctx context.Context, c *harness.Cluster, ns string, r schema.GroupVersionResource, name string, fields map[string]any) error {
	ri := c.Dyn.Resource(r).Namespace(ns)
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	for k, v := range fields {
		if v == nil {
			delete(st, k)
			continue
		}
		st[k] = v
	}
	u.Object["status"] = st
	_, err = ri.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: originalManager})
	return errors.Wrapf(err, "cannot write the status of %s/%s", ns, name)
}

// createOwned server-side applies one object the original makes, as the
// original does: field manager firebolt-operator, a controller owner
// reference to its custom resource.
func createOwned(ctx context.Context, c *harness.Cluster, y, ownerKind, owner string, uid types.UID) error {
	u, err := objectYAML(y)
	if err != nil {
		return err
	}
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "compute.firebolt.io/v1alpha1", Kind: ownerKind, Name: owner, UID: uid,
		Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}})
	ri, err := c.ResourceFor(u)
	if err != nil {
		return err
	}
	_, err = ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: originalManager, Force: true})
	return errors.Wrapf(err, "cannot apply %s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// instanceObjects are the original's objects of instance demo with
// internal PostgreSQL (§6.2).
func instanceObjects(ns string) []string {
	labels := func(component string) string {
		return fmt.Sprintf("{firebolt.io/instance: demo, firebolt.io/component: %s}", component)
	}
	pg, meta, gw := labels("postgres"), labels("metadata"), labels("gateway")
	return []string{
		fmt.Sprintf(`
apiVersion: v1
kind: Secret
metadata: {name: demo-metadata-postgres-creds, namespace: %s, labels: %s}
type: Opaque
stringData: {username: firebolt, password: 0123456789abcdef01234567, database: firebolt_metadata}
`, ns, pg),
		fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: demo-metadata-pg, namespace: %[1]s, labels: %[2]s}
spec: {clusterIP: None, selector: %[2]s, ports: [{name: postgres, port: 5432, targetPort: 5432}]}
`, ns, pg),
		fmt.Sprintf(`
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: demo-metadata-pg, namespace: %[1]s, labels: %[2]s}
spec:
  serviceName: demo-metadata-pg
  replicas: 1
  selector: {matchLabels: %[2]s}
  template:
    metadata: {labels: %[2]s}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      securityContext: {runAsUser: 70, runAsGroup: 70, fsGroup: 70, runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: postgresql
        image: postgres:16-alpine
        ports: [{name: tcp-postgresql, containerPort: 5432}]
        readinessProbe: {tcpSocket: {port: 5432}, initialDelaySeconds: 1, periodSeconds: 5}
        resources: {requests: {cpu: 25m, memory: 64Mi}, limits: {cpu: 250m, memory: 256Mi}}
        securityContext: {readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
        env:
        - {name: POSTGRES_USER, valueFrom: {secretKeyRef: {name: demo-metadata-postgres-creds, key: username}}}
        - {name: POSTGRES_PASSWORD, valueFrom: {secretKeyRef: {name: demo-metadata-postgres-creds, key: password}}}
        - {name: POSTGRES_DB, valueFrom: {secretKeyRef: {name: demo-metadata-postgres-creds, key: database}}}
        - {name: PGDATA, value: /var/lib/postgresql/data/pgdata}
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
`, ns, pg),
		fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-metadata-config, namespace: %s, labels: %s}
data: {config.yaml: "pensieve_lite: {default_account_id: demo, host: 0.0.0.0, port: 7000}\n"}
`, ns, meta),
		fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: demo-metadata, namespace: %[1]s, labels: %[2]s}
spec:
  replicas: 1
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}
  selector: {matchLabels: %[2]s}
  template:
    metadata: {labels: %[2]s}
    spec:
      securityContext: {seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: metadata
        image: ghcr.io/firebolt-db/metadata:release-5.0.0-pre.0.20260815074041.524de236b514
        ports: [{name: grpc, containerPort: 7000}]
        volumeMounts: [{name: config, mountPath: /etc/metadata}]
      volumes: [{name: config, configMap: {name: demo-metadata-config}}]
`, ns, meta),
		fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: demo-metadata, namespace: %[1]s, labels: %[2]s}
spec: {selector: %[2]s, ports: [{name: grpc, port: 7000, targetPort: 7000}]}
`, ns, meta),
		fmt.Sprintf(`
apiVersion: v1
kind: ServiceAccount
metadata: {name: demo-gateway, namespace: %s, labels: %s}
`, ns, gw),
		fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: demo-gateway-wake, namespace: %[1]s, labels: %[2]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: firebolt-operator-gateway-wake}
subjects: [{kind: ServiceAccount, name: demo-gateway, namespace: %[1]s}]
`, ns, gw),
		fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-gateway-config, namespace: %s, labels: %s}
data: {envoy.yaml: "static_resources: {}\n"}
`, ns, gw),
		fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: demo-gateway, namespace: %[1]s, labels: %[2]s}
spec:
  replicas: 2
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: %[2]s}
  template:
    metadata: {labels: %[2]s}
    spec:
      serviceAccountName: demo-gateway
      containers:
      - name: envoy
        image: envoyproxy/envoy:v1.37.2
        args: [-c, /etc/envoy/envoy.yaml]
        ports: [{name: http, containerPort: 8080}]
        volumeMounts: [{name: config, mountPath: /etc/envoy}]
      - name: wake-agent
        image: ghcr.io/firebolt-db/firebolt-operator:v1.0.0
        args: [wake-agent]
      volumes: [{name: config, configMap: {name: demo-gateway-config}}]
`, ns, gw),
		fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: demo-gateway, namespace: %[1]s, labels: %[2]s}
spec: {selector: %[2]s, ports: [{name: http, port: 80, targetPort: 8080}]}
`, ns, gw),
		fmt.Sprintf(`
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: demo-gateway, namespace: %[1]s, labels: %[2]s}
spec: {maxUnavailable: 1, selector: {matchLabels: %[2]s}}
`, ns, gw),
	}
}

// engineObjects are the original's objects of engine e serving its
// generation (§6.1): the generation's ConfigMap, headless Service and
// StatefulSet, and the routing Service selecting it.
func engineObjects(ns, id string, e originalEngine) []string {
	g := fmt.Sprintf("%s-g%d", e.name, e.gen)
	labels := fmt.Sprintf(`{firebolt.io/engine: %s, firebolt.io/generation: "%d"}`, e.name, e.gen)
	var nodes strings.Builder
	for i := 0; i < e.replicas; i++ {
		fmt.Fprintf(&nodes, "  - host: %s-%d.%s-hl.%s.svc.cluster.local\n", g, i, g, ns)
	}
	config := fmt.Sprintf("engine:\n  id: %s\n  nodes:\n%s  termination_grace_period: 55s\ninstance:\n  id: %s\n  multi_engine:\n    metadata_endpoint: demo-metadata.%s.svc.cluster.local:7000\n  type: multi_engine\nlogging:\n  format: json\nschema_version: \"1.0\"\n",
		e.name, nodes.String(), id, ns)
	ports := "[{name: http-query, port: 3473, targetPort: 3473, protocol: TCP}, {name: health, port: 8122, targetPort: 8122, protocol: TCP}, {name: metrics, port: 9090, targetPort: 9090, protocol: TCP}]"
	return []string{
		fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata: {name: %s-config, namespace: %s, labels: %s}
data: {config.yaml: %q}
`, g, ns, labels, config),
		fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: %[1]s-hl, namespace: %[2]s, labels: %[3]s}
spec: {type: ClusterIP, clusterIP: None, publishNotReadyAddresses: true, selector: %[3]s, ports: %[4]s}
`, g, ns, labels, ports),
		fmt.Sprintf(`
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %[1]s, namespace: %[2]s, labels: %[3]s}
spec:
  serviceName: %[1]s-hl
  replicas: %[4]d
  podManagementPolicy: Parallel
  selector: {matchLabels: %[3]s}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  template:
    metadata: {labels: %[3]s}
    spec:
      terminationGracePeriodSeconds: 60
      enableServiceLinks: false
      securityContext: {fsGroup: 3473, fsGroupChangePolicy: OnRootMismatch}
      containers:
      - name: engine
        image: oci.firebolt.io/firebolt-db/engine:release-5.0.0-pre.0.20260815074041.524de236b514
        command: [/bin/bash, -c]
        args: ['exec /opt/firebolt/firebolt server --node "$POD_INDEX" --data-dir /var/lib/firebolt']
        ports: [{name: http-query, containerPort: 3473}, {name: health, containerPort: 8122}, {name: metrics, containerPort: 9090}]
        env:
        - {name: POD_INDEX, valueFrom: {fieldRef: {fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}}
        - {name: FB_AWS_EC2_METADATA_CLIENT_ENABLED, value: "true"}
        readinessProbe: {httpGet: {path: /health/ready, port: 8122}, initialDelaySeconds: 1, periodSeconds: 3, timeoutSeconds: 3, failureThreshold: 6}
        securityContext: {runAsUser: 3473, runAsGroup: 3473, runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        volumeMounts:
        - {name: data, mountPath: /var/lib/firebolt}
        - {name: engine-config, mountPath: /var/lib/firebolt/config.yaml, subPath: config.yaml, readOnly: true}
        - {name: runtime, mountPath: /run/firebolt}
      volumes:
      - {name: engine-config, configMap: {name: %[1]s-config}}
      - {name: runtime, emptyDir: {}}
      - {name: data, emptyDir: {}}
`, g, ns, labels, e.replicas),
		fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: %[1]s-service, namespace: %[2]s, labels: {firebolt.io/engine: %[1]s}}
spec: {type: ClusterIP, clusterIP: None, selector: %[3]s, ports: %[4]s}
`, e.name, ns, labels, ports),
	}
}

// waitOriginalRunning waits until every pod of ns runs and is ready, and
// the volume claim is bound.
func waitOriginalRunning(ctx context.Context, c *harness.Cluster, ns string) error {
	want := 1 + 1 + 2 // PostgreSQL, metadata, gateway
	for _, e := range originalEngines {
		want += e.replicas
	}
	return harness.Wait(ctx, 2*time.Minute, fmt.Sprintf("the original's %d pods in %s ready", want, ns), func(ctx context.Context) (bool, string, error) {
		l, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		ready := 0
		for i := range l.Items {
			if podReady(&l.Items[i]) {
				ready++
			}
		}
		return ready == want && len(l.Items) == want, fmt.Sprintf("%d pods, %d ready", len(l.Items), ready), nil
	})
}

// liveUIDs are the UIDs of what must survive the migration in ns: every
// pod, volume claim, Secret and StatefulSet.
func liveUIDs(ctx context.Context, c *harness.Cluster, ns string) (map[string]types.UID, error) {
	out := map[string]types.UID{}
	pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		out["pod/"+p.Name] = p.UID
	}
	pvcs, err := c.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range pvcs.Items {
		out["pvc/"+p.Name] = p.UID
	}
	for _, name := range []string{"demo-metadata-postgres-creds"} {
		s, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		out["secret/"+name] = s.UID
	}
	sts, err := c.Kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, s := range sts.Items {
		out["statefulset/"+s.Name] = s.UID
	}
	return out, nil
}
