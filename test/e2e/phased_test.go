package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// phasedInitialDelay is the scenario's check.initialDelaySeconds.
const phasedInitialDelay = 10 * time.Second

// phasedSecret is the Secret the scenario's checks name in secretRef.
const phasedSecret = "prometheus-credentials"

// phasedState is what the tests read of a PhasedStatefulSet claim.
type phasedState struct {
	Phase, Step, Revision string
	Partition             int64
	HasStep               bool
	Failed, Successes     int64
	EndTime               string
}

func (p phasedState) String() string {
	return fmt.Sprintf("phase=%q step=%q partition=%d successes=%d failed=%d revision=%q end=%q",
		p.Phase, p.Step, p.Partition, p.Successes, p.Failed, p.Revision, p.EndTime)
}

func readPhased(u *unstructured.Unstructured) phasedState {
	p := phasedState{}
	p.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	p.Revision, _, _ = unstructured.NestedString(u.Object, "status", "updateRevision")
	p.EndTime, _, _ = unstructured.NestedString(u.Object, "status", "rolloutEndTime")
	p.Step, p.HasStep, _ = unstructured.NestedString(u.Object, "status", "rollingPodStatus", "status")
	p.Partition, _, _ = unstructured.NestedInt64(u.Object, "status", "rollingPodStatus", "partition")
	p.Failed, _, _ = unstructured.NestedInt64(u.Object, "status", "rollingPodStatus", "consecutiveFailedChecks")
	p.Successes, _, _ = unstructured.NestedInt64(u.Object, "status", "rollingPodStatus", "consecutiveSuccessfulChecks")
	return p
}

// phasedStatefulSet is examples/phased's PhasedStatefulSet in this
// scenario's namespace, checked against prometheus with a query that
// returns data while no pod of the set runs a query.
func (s *scenario) phasedStatefulSet(name, prometheus string) *unstructured.Unstructured {
	s.t.Helper()
	objs, err := harness.ReadObjects(filepath.Join(harness.Root(), "examples", "phased", "phasedstatefulset.yaml"))
	s.must(err)
	var u *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "PhasedStatefulSet" {
			u = o
		}
	}
	if u == nil {
		s.t.Fatal("examples/phased/phasedstatefulset.yaml holds no PhasedStatefulSet")
	}
	u.SetNamespace(s.ns)
	u.SetName(name)
	// The initial delay outlasts the test's own wait for Prometheus to see
	// the fakes change (a scrape a second), so the test can make the pods
	// busy after a step and before the next step's first check.
	set(s.t, u, map[string]any{
		"initialDelaySeconds": int64(phasedInitialDelay / time.Second), "periodSeconds": int64(2), "successThreshold": int64(2),
		"query": map[string]any{
			"expr": fmt.Sprintf(`sum(firebolt_running_queries{namespace=%q, pod=~"%s-[0-9]+"}) < 1`, s.ns, name),
			"url":  "http://" + prometheus,
			// Prometheus here asks for no credentials and ignores the
			// header; the Secret still goes through Crossplane's
			// requirement and the client's Authorization path.
			"secretRef": phasedSecret,
		},
	}, "spec", "check")
	// KWOK pods are ready at once: no probes, no minimum ready time.
	unstructured.RemoveNestedField(u.Object, "spec", "statefulSet", "spec", "minReadySeconds")
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "statefulSet", "spec", "template", "spec", "containers")
	for _, c := range containers {
		delete(c.(map[string]any), "readinessProbe")
	}
	set(s.t, u, containers, "spec", "statefulSet", "spec", "template", "spec", "containers")
	return u
}

// setImage changes the claim's container image, which makes a new
// StatefulSet revision.
func (s *scenario) setImage(claim *unstructured.Unstructured, image string) {
	s.t.Helper()
	u, err := s.get(claim)
	s.must(err)
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "statefulSet", "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = image
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"statefulSet": map[string]any{"spec": map[string]any{
		"template": map[string]any{"spec": map[string]any{"containers": containers}}}}}})
	s.must(err)
	ri, err := cp.ResourceFor(claim)
	s.must(err)
	_, err = ri.Patch(s.ctx, claim.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	s.must(err)
}

// podRevisions lists the revision of every pod of the StatefulSet by name,
// and the StatefulSet's update revision.
func (s *scenario) podRevisions(ctx context.Context, name string) (map[string]string, *appsv1.StatefulSet, error) {
	return s.statefulSetPods(ctx, name, "app.kubernetes.io/name=web")
}

// statefulSetPods is podRevisions for the pods selector selects.
func (s *scenario) statefulSetPods(ctx context.Context, name, selector string) (map[string]string, *appsv1.StatefulSet, error) {
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	pods, err := cp.Kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, nil, err
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, name+"-") {
			out[p.Name] = p.Labels[appsv1.ControllerRevisionHashLabelKey]
		}
	}
	return out, sts, nil
}

// updatedPods counts the pods on the StatefulSet's update revision.
func updatedPods(revs map[string]string, sts *appsv1.StatefulSet) int {
	n := 0
	for _, r := range revs {
		if r == sts.Status.UpdateRevision {
			n++
		}
	}
	return n
}

// waitQuery waits until the scenario's Prometheus answers expr with data
// (want true) or without (want false): the fakes' change has been scraped.
func (s *scenario) waitQuery(prometheus, expr string, want bool) {
	s.t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	s.wait(30*time.Second, fmt.Sprintf("Prometheus to answer %s with data=%t", expr, want), func(ctx context.Context) (bool, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+prometheus+"/api/v1/query?query="+url.QueryEscape(expr), nil)
		if err != nil {
			return false, "", err
		}
		rsp, err := client.Do(req)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		defer rsp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(rsp.Body, 1<<20))
		var body struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			return false, string(b), nil
		}
		return (len(body.Data.Result) > 0) == want, string(b), nil
	})
}

// Issue 11, part 3, on the real control plane with a real Prometheus
// scraping the fake pods: a PhasedStatefulSet's image change rolls pod by
// pod, holding while the check's query returns no data and going on when it
// returns data; standardRollingUpdate lets the StatefulSet controller finish
// at once, checks failing or not.
func TestPhasedStatefulSetRollsPodByPod(t *testing.T) {
	s := newScenario(t, "s-phased")
	const promAddr = "127.0.0.1:19090"
	prom, err := cp.StartPrometheus(s.ctx, s.ns, promAddr)
	s.must(err)
	t.Cleanup(prom.Stop)

	name := "web"
	ok := fmt.Sprintf(`sum(firebolt_running_queries{namespace=%q, pod=~"%s-[0-9]+"}) < 1`, s.ns, name)
	_, err = cp.Kube.CoreV1().Secrets(s.ns).Create(s.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: phasedSecret, Namespace: s.ns},
		StringData: map[string]string{"token": "e2e-token"},
	}, metav1.CreateOptions{})
	s.must(err)
	claim := s.apply(s.phasedStatefulSet(name, promAddr))

	waitPhased := func(what string, timeout time.Duration, done func(phasedState, map[string]string, *appsv1.StatefulSet) bool) phasedState {
		t.Helper()
		var st phasedState
		s.wait(timeout, what, func(ctx context.Context) (bool, string, error) {
			u, err := s.get(claim)
			if err != nil || u == nil {
				return false, fmt.Sprintf("claim: %v", err), nil
			}
			st = readPhased(u)
			revs, sts, err := s.podRevisions(ctx, name)
			if err != nil {
				return false, st.String() + " " + harness.SeenErr(err), nil
			}
			return done(st, revs, sts), fmt.Sprintf("%s pods=%v update=%s", st, revs, sts.Status.UpdateRevision), nil
		})
		return st
	}
	waitPhased("three pods up to date", rolloutTimeout, func(st phasedState, revs map[string]string, sts *appsv1.StatefulSet) bool {
		return st.Phase == "updated" && len(revs) == 3 && updatedPods(revs, sts) == 3 && sts.Status.AvailableReplicas == 3
	})
	s.waitQuery(promAddr, ok, true)

	// Busy pods: the query returns no data, so no pod may be let go.
	cp.Pods.Set(s.ns, name+"-", harness.Behaviour{Mode: harness.Busy, Running: 2})
	s.waitQuery(promAddr, ok, false)
	parts := s.watchPartitions(name)
	s.setImage(claim, "registry.k8s.io/nginx-slim:0.28")
	held := waitPhased("the rollout held by failing checks", rolloutTimeout, func(st phasedState, _ map[string]string, _ *appsv1.StatefulSet) bool {
		return st.Phase == "rolling" && st.Failed >= 3
	})
	revs, sts, err := s.podRevisions(s.ctx, name)
	s.must(err)
	if held.Partition != 3 || updatedPods(revs, sts) != 0 || sts.Spec.UpdateStrategy.RollingUpdate == nil || *sts.Spec.UpdateStrategy.RollingUpdate.Partition != 3 {
		t.Fatalf("failing checks let pods go: %s, pods %v on update revision %s, StatefulSet partition %v", held, revs, sts.Status.UpdateRevision, sts.Spec.UpdateStrategy.RollingUpdate)
	}

	// Quiet pods: the checks pass, and pods go one at a time. Watch every
	// partition the StatefulSet is given until the first pod has rolled,
	// then make the pods busy again: the rollout holds at that step.
	// The pods turn busy again as soon as the first step lowers the
	// partition: the next step's checks start only after the initial
	// delay, which outlasts Prometheus's scrape of the change.
	cp.Pods.Set(s.ns, name+"-", harness.Behaviour{Mode: harness.Idle})
	waitPhased("the first step", rolloutTimeout, func(_ phasedState, _ map[string]string, sts *appsv1.StatefulSet) bool {
		ru := sts.Spec.UpdateStrategy.RollingUpdate
		return ru != nil && ru.Partition != nil && *ru.Partition <= 2
	})
	cp.Pods.Set(s.ns, name+"-", harness.Behaviour{Mode: harness.Busy, Running: 1})
	s.waitQuery(promAddr, ok, false)
	mid := waitPhased("the rollout held again at its second step", rolloutTimeout, func(st phasedState, _ map[string]string, _ *appsv1.StatefulSet) bool {
		return st.Phase == "rolling" && st.Partition == 2 && st.Failed >= 3
	})
	revs, sts, err = s.podRevisions(s.ctx, name)
	s.must(err)
	if mid.Partition != 2 || updatedPods(revs, sts) != 1 {
		t.Fatalf("busy pods let a second pod go: %s, pods %v on update revision %s", mid, revs, sts.Status.UpdateRevision)
	}

	cp.Pods.Set(s.ns, name+"-", harness.Behaviour{Mode: harness.Idle})
	done := waitPhased("every pod rolled", rolloutTimeout, func(st phasedState, revs map[string]string, sts *appsv1.StatefulSet) bool {
		return st.Phase == "updated" && len(revs) == 3 && updatedPods(revs, sts) == 3
	})
	if done.EndTime == "" {
		t.Errorf("rolloutEndTime not set once every pod rolled: %s", done)
	}
	// One step per pod, highest ordinal first, each lowering the
	// partition by one (polling the StatefulSet could miss the
	// short-lived partition 0; its watch does not).
	s.checkOnePodAtATime(parts, "PhasedStatefulSet", name)

	// standardRollingUpdate: no gating; with failing checks the
	// StatefulSet controller still rolls every pod.
	cp.Pods.Set(s.ns, name+"-", harness.Behaviour{Mode: harness.Busy, Running: 1})
	s.waitQuery(promAddr, ok, false)
	ri, err := cp.ResourceFor(claim)
	s.must(err)
	_, err = ri.Patch(s.ctx, name, types.MergePatchType, []byte(`{"spec":{"standardRollingUpdate":true}}`), metav1.PatchOptions{})
	s.must(err)
	s.setImage(claim, "registry.k8s.io/nginx-slim:0.29")
	waitPhased("a standard rolling update to finish with the checks failing", rolloutTimeout, func(st phasedState, revs map[string]string, sts *appsv1.StatefulSet) bool {
		return st.Phase == "suspended" && len(revs) == 3 && updatedPods(revs, sts) == 3 && sts.Status.UpdateRevision == sts.Status.CurrentRevision
	})
}

// prometheusAndInstance starts the scenario's Prometheus on addr and a
// ready FireboltInstance named instance.
func (s *scenario) prometheusAndInstance(addr, instance string) {
	s.t.Helper()
	prom, err := cp.StartPrometheus(s.ctx, s.ns, addr)
	s.must(err)
	s.t.Cleanup(prom.Stop)
	inst := s.instance(instance)
	s.apply(inst)
	s.waitInstanceReady(inst)
}
