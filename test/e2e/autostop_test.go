package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Auto-stop's timings in this scenario: short, so that idling is seen in
// seconds.
const (
	autoStopIdleTimeout  = 15 * time.Second
	autoStopPollInterval = 2 * time.Second
)

// autoStopState is what the tests read of status.autoStop.
type autoStopState struct {
	Replicas int64
	Reason   string
	Has      bool
}

func readAutoStop(u *unstructured.Unstructured) autoStopState {
	r, ok, _ := unstructured.NestedInt64(u.Object, "status", "autoStop", "replicas")
	reason, _, _ := unstructured.NestedString(u.Object, "status", "autoStop", "reason")
	return autoStopState{Replicas: r, Reason: reason, Has: ok}
}

func (a autoStopState) String() string {
	return fmt.Sprintf("autoStop{replicas=%d reason=%q}", a.Replicas, a.Reason)
}

// autoStopEngine is the example engine with two replicas and auto-stop
// enabled at this scenario's timings, changed by mods.
func (s *scenario) autoStopEngine(name string, mods ...func(map[string]any)) *unstructured.Unstructured {
	s.t.Helper()
	u := s.engine(name, "demo", "", 2)
	as := map[string]any{
		"enabled": true, "activeReplicas": int64(2),
		"idleTimeout": autoStopIdleTimeout.String(), "pollInterval": autoStopPollInterval.String(),
	}
	for _, m := range mods {
		m(as)
	}
	set(s.t, u, as, "spec", "autoStop")
	return u
}

// claimReplicas reads spec.replicas from the claim.
func (s *scenario) claimReplicas(eng *unstructured.Unstructured) int64 {
	s.t.Helper()
	u, err := s.get(eng)
	s.must(err)
	r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	return r
}

// Issue 10, function side, on the real control plane: an engine whose pods
// are quiet idles to zero after idleTimeout; engines whose pods report
// queries, whose scrapes fail, or whose schedule window is open stay at
// activeReplicas; a fresh firebolt.io/wake-requested stamp on the claim
// wakes the stopped engine; and the product never changes a claim's
// spec.replicas.
func TestAutoStopIdlesHoldsAndWakes(t *testing.T) {
	s := newScenario(t, "s-autostop")
	inst := s.instance("demo")
	s.apply(inst)
	s.waitInstanceReady(inst)

	// The window is open for an hour either side of now, every day; one
	// that crosses midnight belongs to its start day, which is fine for a
	// window of every day.
	now := time.Now().UTC()
	window := map[string]any{"start": now.Add(-time.Hour).Format("15:04"), "end": now.Add(time.Hour).Format("15:04")}
	cp.Pods.Set(s.ns, "busy-g", harness.Behaviour{Mode: harness.Busy, Running: 1})
	cp.Pods.Set(s.ns, "failing-g", harness.Behaviour{Mode: harness.Failing})
	engines := map[string]*unstructured.Unstructured{
		"idle":    s.autoStopEngine("idle"),
		"busy":    s.autoStopEngine("busy"),
		"failing": s.autoStopEngine("failing"),
		"sched":   s.autoStopEngine("sched", func(as map[string]any) { as["schedule"] = []any{window} }),
	}
	for _, e := range engines {
		s.apply(e)
	}
	for _, e := range engines {
		s.waitStable(e, -1)
	}

	idle := engines["idle"]
	st := s.waitEngine(idle, rolloutTimeout, "auto-stopped", func(e engineState) bool {
		return e.Phase == "stopped" && e.EngineReady.Reason == "AutoStopped"
	})
	s.wait(rolloutTimeout, "no pods of the auto-stopped engine", func(ctx context.Context) (bool, string, error) {
		l, err := cp.Kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: labelEngine + "=idle"})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		return len(l.Items) == 0, fmt.Sprintf("%d pods", len(l.Items)), nil
	})

	want := map[string]string{"busy": "ActivityObserved", "failing": "ScrapeFailed", "sched": "ScheduleActive"}
	deadline := time.Now().Add(3 * autoStopIdleTimeout)
	for name, reason := range want {
		eng := engines[name]
		s.consistently(rolloutTimeout, fmt.Sprintf("%s held at 2 replicas (%s)", name, reason), func() (bool, string) {
			u, err := s.get(eng)
			if err != nil || u == nil {
				return true, fmt.Sprintf("no observation: %v", err)
			}
			e, a := readEngine(u), readAutoStop(u)
			if !a.Has || a.Reason == "Initializing" {
				return true, a.String()
			}
			return e.Phase == "stable" && a.Replicas == 2 && a.Reason == reason, e.String() + " " + a.String()
		}, func() bool { return time.Now().After(deadline) })
	}

	for name, eng := range engines {
		if r := s.claimReplicas(eng); r != 2 {
			t.Errorf("the product changed the spec.replicas of claim %s to %d", name, r)
		}
	}

	// The gateway's wake agent stamps the claim; Crossplane copies the
	// annotation to the composite, and the function wakes the engine.
	stampedAt := time.Now().UTC().Format(time.RFC3339)
	stamp := fmt.Sprintf(`{"metadata":{"annotations":{"firebolt.io/wake-requested":%q}}}`, stampedAt)
	ri, err := cp.ResourceFor(idle)
	s.must(err)
	_, err = ri.Patch(s.ctx, "idle", types.MergePatchType, []byte(stamp), metav1.PatchOptions{})
	s.must(err)
	s.waitStable(idle, st.Active)
	u, err := s.get(idle)
	s.must(err)
	// The wake started the idle clock, so the woken engine's next quiet
	// samples read ActivityObserved until idleTimeout has passed.
	if a := readAutoStop(u); a.Replicas != 2 || (a.Reason != "WakeRequested" && a.Reason != "ActivityObserved") {
		t.Errorf("after the wake stamp: %s, want 2 replicas, WakeRequested or ActivityObserved", a)
	}
	if last, _, _ := unstructured.NestedString(u.Object, "status", "autoStop", "lastActivityTime"); last < stampedAt {
		t.Errorf("after the wake stamp at %s: lastActivityTime %q, want the idle clock started at the wake", stampedAt, last)
	}
	if r := s.claimReplicas(idle); r != 2 {
		t.Errorf("the product changed the spec.replicas of claim idle to %d", r)
	}
}

// Issue 10, gateway side, on the real control plane: the wake agent, run as
// a real process with the token the kubelet would project into its
// container of a real gateway pod (the gateway ServiceAccount the instance
// composes, bound to the pod, so with exactly its Role), holds a request for an auto-stopped
// engine, stamps the claim, and releases the request once the woken
// generation has a ready endpoint; the next request for it is routed at
// once. The claim's spec.replicas is never changed.
func TestWakeAgentHoldsStampsAndReleases(t *testing.T) {
	s := newScenario(t, "s-wake")
	inst := s.instance("demo")
	s.apply(inst)
	s.waitInstanceReady(inst)
	eng := s.autoStopEngine("sleepy")
	s.apply(eng)
	s.waitStable(eng, -1)
	st := s.waitEngine(eng, rolloutTimeout, "auto-stopped", func(e engineState) bool {
		return e.Phase == "stopped" && e.EngineReady.Reason == "AutoStopped"
	})

	// The gateway pod as the API server admitted it (its ServiceAccount
	// admission included): no container but the wake agent can read a
	// token, and the agent's is projected.
	pod := s.gatewayPod("demo")
	if pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("gateway pod automountServiceAccountToken %v, want false", pod.Spec.AutomountServiceAccountToken)
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		for _, m := range c.VolumeMounts {
			if c.Name != "wake-agent" && strings.HasPrefix(m.MountPath, "/var/run/secrets") {
				t.Errorf("gateway container %s mounts %s at %s: only the wake agent may hold a token", c.Name, m.Name, m.MountPath)
			}
		}
	}
	const hold, metrics = "127.0.0.1:19902", "127.0.0.1:19903"
	agent, err := cp.StartWakeAgent(s.ctx, pod, "wake-agent", hold, metrics)
	s.must(err)
	t.Cleanup(agent.Stop)

	// The agent routes everything through until its EndpointSlice cache
	// has synced; the first answer that is not "unsynced" is the hold.
	type answer struct {
		status   int
		decision string
		err      error
		took     time.Duration
	}
	ask := func(engine string) answer {
		ctx, cancel := context.WithTimeout(s.ctx, 3*time.Minute)
		defer cancel()
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hold+"/hold?engine="+engine, nil)
		if err != nil {
			return answer{err: err}
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			return answer{err: err}
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(rsp.Body, 1<<16))
		_ = rsp.Body.Close()
		return answer{status: rsp.StatusCode, decision: rsp.Header.Get("x-firebolt-wake-decision"), took: time.Since(start)}
	}
	held := make(chan answer, 1)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			a := ask("sleepy")
			if a.err != nil || a.decision != "unsynced" || time.Now().After(deadline) {
				held <- a
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()

	s.wait(rolloutTimeout, "the wake stamp on the claim", func(context.Context) (bool, string, error) {
		u, err := s.get(eng)
		if err != nil || u == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		v := u.GetAnnotations()["firebolt.io/wake-requested"]
		_, perr := time.Parse(time.RFC3339, v)
		return perr == nil, fmt.Sprintf("annotation %q", v), nil
	})
	// KWOK's pods are ready at once, so the engine can wake, and the held
	// request be released, before this test sees the stamp: that the
	// answer is "released" (not "ready") is what shows it was held.
	s.waitStable(eng, st.Active)

	var a answer
	select {
	case a = <-held:
	case <-time.After(rolloutTimeout):
		t.Fatal("the held request was not released within the rollout timeout after the engine became stable")
	}
	if a.err != nil || a.status != http.StatusOK || a.decision != "released" {
		t.Fatalf("held request: %+v, want 200 released", a)
	}
	t.Logf("held request released after %s; the agent's peak memory %s", a.took.Round(100*time.Millisecond), peakRSS(agent.Pid()))
	if fast := ask("sleepy"); fast.status != http.StatusOK || fast.decision != "ready" {
		t.Errorf("request for the woken engine: %+v, want 200 ready", fast)
	}
	if r := s.claimReplicas(eng); r != 2 {
		t.Errorf("the product changed the claim's spec.replicas to %d", r)
	}
}

// peakRSS is a process's peak resident set (VmHWM), for the log.
func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown: " + err.Error()
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
