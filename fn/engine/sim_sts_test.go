package engine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// simSTS is the StatefulSet controller's view of one StatefulSet: its
// pods' revisions and readiness, and the revisions of its templates. A
// revision is named after a hash of the pod template, as the controller
// names its ControllerRevisions.
type simSTS struct {
	pods            []simPod
	current, update string
	partition       int64
	// generation counts its spec's changes; observed and reported are
	// the generation and update revision its status last described: the
	// controller catches up only when it runs.
	generation, observed int64
	reported             string
	// changedAt is the step its partition or template last changed.
	changedAt int
}

type simPod struct {
	rev     string
	readyAt int
}

func templateRevision(content map[string]any) string {
	tpl, _, _ := unstructured.NestedFieldNoCopy(content, "spec", "template")
	b, err := json.Marshal(tpl)
	if err != nil {
		// Decoded from JSON: it encodes again.
		panic(err)
	}
	sum := sha256.Sum256(b)
	return "rev-" + hex.EncodeToString(sum[:4])
}

func contentPartition(content map[string]any) int64 {
	v, ok, _ := unstructured.NestedFieldNoCopy(content, "spec", "updateStrategy", "rollingUpdate", "partition")
	if !ok {
		return 0
	}
	f, _ := v.(float64)
	return int64(f)
}

// newSimSTS is a StatefulSet just created: every pod on its one revision,
// ready at readyAt.
func newSimSTS(content map[string]any, readyAt int) *simSTS {
	rev := templateRevision(content)
	replicas, _, _ := unstructured.NestedFloat64(content, "spec", "replicas")
	t := &simSTS{current: rev, update: rev, reported: rev, partition: contentPartition(content), generation: 1, observed: 1}
	for range int(replicas) {
		t.pods = append(t.pods, simPod{rev: rev, readyAt: readyAt})
	}
	return t
}

func (t *simSTS) ready(step int) int {
	n := 0
	for _, p := range t.pods {
		if step >= p.readyAt {
			n++
		}
	}
	return n
}

func (t *simSTS) updated() int {
	n := 0
	for _, p := range t.pods {
		if p.rev == t.reported {
			n++
		}
	}
	return n
}

// advance is one pass of the controller: while every pod is ready, it
// replaces the highest-ordinal pod at or above the partition that is not
// on the update revision; once every pod is on it, it is current.
func (t *simSTS) advance(step int, delay func() int) {
	t.observed, t.reported = t.generation, t.update
	if t.ready(step) < len(t.pods) {
		return
	}
	for i := len(t.pods) - 1; i >= 0 && int64(i) >= t.partition; i-- {
		if t.pods[i].rev != t.update {
			t.pods[i] = simPod{rev: t.update, readyAt: step + 1 + delay()}
			return
		}
	}
	if t.updated() == len(t.pods) {
		t.current = t.update
	}
}

// inPlaceFields strips what the API server lets change on a live
// StatefulSet and a phased engine changes in place.
func inPlaceFields(content map[string]any) map[string]any {
	c := runtime.DeepCopyJSON(content)
	unstructured.RemoveNestedField(c, "metadata", "annotations")
	unstructured.RemoveNestedField(c, "spec", "template")
	unstructured.RemoveNestedField(c, "spec", "updateStrategy")
	return c
}

// applyInPlace takes an apply of a live StatefulSet: only the fields the
// API server lets change may, and a lower partition may let at most one
// pod go, which must have been seen drained since the partition last
// changed (a decision whose apply failed is applied by a later step) and
// its peers ready (seed 004 plus the drain gate).
func (s *sim) applyInPlace(name resource.Name, o *simObj, content map[string]any) {
	s.t.Helper()
	if !reflect.DeepEqual(inPlaceFields(o.content), inPlaceFields(content)) {
		s.fail("step %d: %s changed more than its template, annotations and update strategy in place", s.step, name)
	}
	t := o.sts
	update := templateRevision(content)
	partition := contentPartition(content)
	var moving []int
	for i := range t.pods {
		if int64(i) >= partition && t.pods[i].rev != update && (int64(i) < t.partition || update != t.update) {
			moving = append(moving, i)
		}
	}
	gen, _ := generationOf(name)
	if s.suspendedAt >= t.changedAt {
		// standardRollingUpdate: the controller rolls every pod at once.
		moving = nil
	}
	if update != t.update && len(moving) > 0 {
		s.fail("step %d: generation %d's template changed with pods %v let go at once (partition %d)", s.step, gen, moving, partition)
	}
	if len(moving) > 1 {
		s.fail("step %d: generation %d's partition lowered from %d to %d lets pods %v go at once", s.step, gen, t.partition, partition, moving)
	}
	if len(moving) == 1 {
		k := moving[0]
		// The gate follows the live policy, as a draining generation's
		// wait does: a step decided while it was off may be applied later.
		gated := s.ungatedAt < t.changedAt
		pod := fmt.Sprintf("%s-%d", o.content["metadata"].(map[string]any)["name"], k)
		if at, ok := s.podDrained[pod]; gated && (!ok || at < t.changedAt) {
			s.fail("step %d: pod %d of generation %d let go without a drained verdict", s.step, k, gen)
		}
		if !s.observedReady[gen] {
			s.fail("step %d: pod %d of generation %d let go while its peers were not observed ready", s.step, k, gen)
		}
		s.podsLetGo++
	}
	if update != t.update || partition != t.partition {
		t.changedAt = s.step
		t.generation++
	}
	t.update, t.partition = update, partition
}

// podObject is pod name as the API server returns it, when it exists.
func (s *sim) podObject(name string) *unstructured.Unstructured {
	i := strings.LastIndex(name, "-")
	if i < 0 {
		return nil
	}
	ordinal, err := strconv.Atoi(name[i+1:])
	if err != nil {
		return nil
	}
	for n, o := range s.objs {
		if o.sts == nil || o.content["metadata"].(map[string]any)["name"] != name[:i] {
			continue
		}
		if ordinal >= len(o.sts.pods) {
			return nil
		}
		g, _ := generationOf(n)
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": simNamespace, "labels": map[string]any{
				engine.LabelEngine: s.engine, engine.LabelGeneration: strconv.Itoa(g),
				appsv1.ControllerRevisionHashLabelKey: o.sts.pods[ordinal].rev,
			}},
		}}
	}
	return nil
}

// allUpdated reports whether the active generation's pods all run its
// latest template.
func (s *sim) allUpdated() (bool, string) {
	st := s.Status()
	o := s.objs[resource.Name(fmt.Sprintf("g%d-statefulset", st.ActiveGeneration))]
	if o == nil || o.sts == nil {
		return false, "no active StatefulSet"
	}
	if o.sts.updated() != len(o.sts.pods) || o.sts.current != o.sts.update || o.sts.reported != o.sts.update {
		return false, fmt.Sprintf("%d of %d pods on the update revision %s (current %s)", o.sts.updated(), len(o.sts.pods), o.sts.update, o.sts.current)
	}
	return true, ""
}

// noteGate records a step whose policy has no drain gate.
func (s *sim) noteGate() {
	spec := s.Spec()
	if (spec.DrainCheckEnabled != nil && !*spec.DrainCheckEnabled) || spec.Rollout == v1alpha1.RolloutRecreate {
		s.ungatedAt = s.step
	}
	if spec.StandardRollingUpdate {
		s.suspendedAt = s.step
	}
}

// checkUpdating asserts what an in-place update must hold: one generation,
// the one serving.
func (s *sim) checkUpdating(st v1alpha1.FireboltEngineStatus) {
	if st.Phase != v1alpha1.EnginePhaseUpdating {
		return
	}
	if st.CurrentGeneration != st.ActiveGeneration || st.DrainingGeneration != nil {
		s.fail("step %d: updating with current %d, active %d, draining %v", s.step, st.CurrentGeneration, st.ActiveGeneration, st.DrainingGeneration)
	}
}
