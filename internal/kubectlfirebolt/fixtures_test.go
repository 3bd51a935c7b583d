package kubectlfirebolt

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// instances are three instances: ready, provisioning, never reconciled.
func instances(t *testing.T) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: demo, namespace: firebolt, generation: 1}
spec: {metadata: {}, gateway: {}}
status:
  phase: Ready
  id: 01JBCDEFGHJKMNPQRSTVWXYZ00
  observedGeneration: 1
  conditions:
  - {type: Ready, status: "True", reason: Available}
  - {type: Synced, status: "True", reason: ReconcileSuccess}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: staging, namespace: firebolt, generation: 2}
spec: {metadata: {}, gateway: {}}
status:
  phase: Provisioning
  conditions:
  - {type: Ready, status: "False", reason: Creating}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: fresh, namespace: firebolt, generation: 1}
spec: {metadata: {}, gateway: {}}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltInstance
metadata: {name: elsewhere, namespace: other, generation: 1}
spec: {metadata: {}, gateway: {}}
status: {phase: Ready}
`),
	}
}

// engines are four engines of two instances in every state the list
// shows, and one in another namespace.
func engines(t *testing.T) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: analytics, namespace: firebolt, generation: 3}
spec: {instanceRef: demo, engineClassRef: standard, replicas: 2}
status:
  phase: stable
  observedGeneration: 3
  currentGeneration: 1
  activeGeneration: 1
  conditions:
  - {type: Ready, status: "True", reason: Available}
  - {type: EngineReady, status: "True", reason: EngineReady, message: serving traffic on generation 1}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: adhoc, namespace: firebolt, generation: 2}
spec: {instanceRef: demo, replicas: 1}
status:
  phase: creating
  observedGeneration: 1
  currentGeneration: 1
  activeGeneration: 0
  conditions:
  - {type: Ready, status: "False", reason: Creating}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: nightly, namespace: firebolt, generation: 1}
spec: {instanceRef: staging, replicas: 0}
status: {phase: stopped, observedGeneration: 1, currentGeneration: 0, activeGeneration: 0}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: new, namespace: firebolt, generation: 1}
spec: {instanceRef: staging, replicas: 4}
`),
		obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: faraway, namespace: other, generation: 1}
spec: {instanceRef: elsewhere, replicas: 1}
status: {phase: stable}
`),
	}
}
