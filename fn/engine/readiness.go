package engine

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podsState is what an observed StatefulSet says about its pods.
type podsState struct {
	Exists bool
	// Ready: every desired pod is ready (see statefulSetPods).
	Ready bool
	// ReadyReplicas and Replicas are from the StatefulSet's status;
	// Desired is the replica count it should run.
	ReadyReplicas int64
	Replicas      int64
	Desired       int64
}

// statefulSetPods decides pod readiness from an observed StatefulSet's
// status alone, no pod reads: ready iff it exists, the controller has seen
// its latest spec (status.observedGeneration >= metadata.generation) and
// readyReplicas == replicas == desired. A StatefulSet of zero replicas is
// ready once it exists, as the original's vacuous 0/0.
func statefulSetPods(obs *ObservedObject, desired int64) podsState {
	if obs == nil {
		return podsState{Desired: desired}
	}
	s := podsState{
		Exists:        true,
		ReadyReplicas: obs.number("status", "readyReplicas"),
		Replicas:      obs.number("status", "replicas"),
		Desired:       desired,
	}
	if desired == 0 {
		s.Ready = true
		return s
	}
	seen := obs.number("status", "observedGeneration") >= obs.number("metadata", "generation")
	s.Ready = seen && s.ReadyReplicas == desired && s.Replicas == desired
	return s
}

// number reads an integer field of unstructured content, whichever numeric
// type the decoder produced (protobuf structs carry float64). Absent or
// non-numeric reads as 0.
func number(obj map[string]any, path ...string) int64 {
	v, ok, err := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok || err != nil {
		return 0
	}
	return numberOf(v)
}

// numberOf is number's reading of one value.
func numberOf(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

// routedGeneration is the generation an observed routing Service selects;
// -1 when there is none or its selector is not a generation.
func routedGeneration(obs *ObservedObject) int {
	if obs == nil {
		return -1
	}
	s, ok := obs.str("spec", "selector", LabelGeneration)
	if !ok {
		return -1
	}
	g, err := strconv.Atoi(s)
	if err != nil || g < 0 {
		return -1
	}
	return g
}
