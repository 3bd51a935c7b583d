package statemetrics

import (
	"strconv"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// The informers keep, of each object, only what its series need: a
// composite carries its generations' renderings (up to three gzipped
// object sets of 256 KiB each), which the series never read. The
// transforms below turn every object into one of these small values
// before it is stored. Each embeds a trimmed ObjectMeta (name, namespace,
// resourceVersion) so the informer's store can key it.

// maxLabelBytes bounds a label value taken from an object. Names Kubernetes
// bounds itself; spec.instanceRef and status.id it does not, and a label
// value is held in every series that carries it.
const maxLabelBytes = 253

// claim is the claim a composite was made for: the namespace and name the
// original operator's series are labelled with.
type claim struct{ namespace, name string }

func (c claim) known() bool { return c.namespace != "" && c.name != "" }

// tracked is a trimmed composite.
type tracked interface {
	claimOf() claim
	compositeName() string
}

// engineState is what the cache keeps of an XFireboltEngine.
type engineState struct {
	metav1.ObjectMeta

	claim    claim
	instance string
	// replicas is the replica count in effect: auto-stop's decision when it
	// made one, else spec.replicas. The original's auto-stop wrote its
	// decision into spec.replicas, so this is what its spec_replicas read.
	replicas   int64
	phase      string
	current    int64
	active     int64
	draining   int64 // -1 when no generation is draining
	reconciled time.Time
	// ready is EngineReady (the original's Ready: Crossplane reserves the
	// type); instanceReady is InstanceReady. True only when True.
	ready, instanceReady bool
}

func (e *engineState) claimOf() claim        { return e.claim }
func (e *engineState) compositeName() string { return e.Name }

// Instance condition types, the original's: Ready is Crossplane's own
// condition, which follows the readiness the function returns (phase
// Ready); the others are the function's.
var instanceConditions = []string{"Ready", "MetadataReady", "GatewayReady", contract.ConditionAuthReady, "EngineTLSReady", "GatewayTLSReady"}

// instanceState is what the cache keeps of an XFireboltInstance.
type instanceState struct {
	metav1.ObjectMeta

	claim      claim
	id         string
	external   bool
	phase      string
	conditions []bool // by instanceConditions
	reconciled time.Time

	keyGeneration int64
	keys          map[v1alpha1.SigningKeyPhase]int64
	pendingStep   string
	pendingSince  time.Time
	lagging       int64
}

func (i *instanceState) claimOf() claim        { return i.claim }
func (i *instanceState) compositeName() string { return i.Name }

// statefulSetState is what the cache keeps of an engine's StatefulSet.
type statefulSetState struct {
	metav1.ObjectMeta

	engine     string
	generation string
	replicas   int32
	ready      int32
}

// trimmedMeta keeps what the store needs to key and version an object.
func trimmedMeta(m metav1.Object) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), ResourceVersion: m.GetResourceVersion()}
}

// trimEngine is the engine informer's transform. An object already
// trimmed passes unchanged (client-go may hand one back).
func trimEngine(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	o := u.Object
	e := &engineState{
		ObjectMeta: trimmedMeta(u),
		claim:      claimOf(u),
		instance:   bounded(str(o, "spec", "instanceRef")),
		replicas:   num(o, "spec", "replicas"),
		phase:      str(o, "status", "phase"),
		current:    num(o, "status", "currentGeneration"),
		active:     num(o, "status", "activeGeneration"),
		draining:   -1,
		reconciled: timestamp(o, "status", "lastReconciled"),
	}
	if r, ok, _ := unstructured.NestedInt64(o, "status", "autoStop", "replicas"); ok {
		e.replicas = r
	}
	if d, ok, _ := unstructured.NestedInt64(o, "status", "drainingGeneration"); ok {
		e.draining = d
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(o, "status", "activeGeneration"); !ok {
		e.active = -1
	}
	cs := composite.Conditions(o)
	e.ready = cs[engine.TypeEngineReady].Status == metav1.ConditionTrue
	e.instanceReady = cs[engine.TypeInstanceReady].Status == metav1.ConditionTrue
	return e, nil
}

// trimInstance is the instance informer's transform.
func trimInstance(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	o := u.Object
	_, external, _ := unstructured.NestedFieldNoCopy(o, "spec", "metadata", "postgres")
	i := &instanceState{
		ObjectMeta:    trimmedMeta(u),
		claim:         claimOf(u),
		id:            bounded(str(o, "status", "id")),
		external:      external,
		phase:         str(o, "status", "phase"),
		conditions:    make([]bool, len(instanceConditions)),
		reconciled:    timestamp(o, "status", "lastReconciled"),
		keyGeneration: num(o, "status", "auth", "signingKeyGeneration"),
		keys:          map[v1alpha1.SigningKeyPhase]int64{},
		pendingStep:   str(o, "status", "auth", "pendingRotationStep"),
		pendingSince:  timestamp(o, "status", "auth", "pendingSince"),
		lagging:       num(o, "status", "auth", "laggingEngineCount"),
	}
	cs := composite.Conditions(o)
	for n, t := range instanceConditions {
		i.conditions[n] = cs[t].Status == metav1.ConditionTrue
	}
	keys, _, _ := unstructured.NestedSlice(o, "status", "auth", "signingKeys")
	for _, k := range keys {
		if m, ok := k.(map[string]any); ok {
			if p, ok := m["phase"].(string); ok && signingKeyPhase[v1alpha1.SigningKeyPhase(p)] {
				i.keys[v1alpha1.SigningKeyPhase(p)]++
			}
		}
	}
	return i, nil
}

// trimStatefulSet is the StatefulSet informer's transform.
func trimStatefulSet(obj any) (any, error) {
	s, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		return obj, nil
	}
	return &statefulSetState{
		ObjectMeta: trimmedMeta(s),
		engine:     s.Labels[contract.LabelEngine],
		generation: s.Labels[engine.LabelGeneration],
		replicas:   s.Status.Replicas,
		ready:      s.Status.ReadyReplicas,
	}, nil
}

// generationKey indexes an engine's StatefulSets by namespace, engine and
// generation: the labels the routing Service selects pods by.
func generationKey(namespace, engine string, gen int64) string {
	return namespace + "/" + engine + "/" + strconv.FormatInt(gen, 10)
}

func claimOf(u *unstructured.Unstructured) claim {
	l := u.GetLabels()
	return claim{namespace: l[composite.LabelClaimNamespace], name: l[composite.LabelClaimName]}
}

func str(o map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(o, path...)
	return s
}

func num(o map[string]any, path ...string) int64 {
	n, _, _ := unstructured.NestedInt64(o, path...)
	return n
}

// timestamp reads an RFC 3339 time; zero when absent or malformed.
func timestamp(o map[string]any, path ...string) time.Time {
	t, err := time.Parse(time.RFC3339, str(o, path...))
	if err != nil {
		return time.Time{}
	}
	return t
}

// bounded cuts s to maxLabelBytes at a rune boundary. Series stay
// distinct: each also carries the claim's namespace and name.
func bounded(s string) string {
	if len(s) <= maxLabelBytes {
		return s
	}
	n := maxLabelBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
