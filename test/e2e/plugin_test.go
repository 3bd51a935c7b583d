package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/internal/kubectlfirebolt"
	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// pluginRun is one run of the plugin: what it printed and its exit status.
type pluginRun struct {
	Stdout, Stderr string
	Code           int
}

// lockedBuffer is a buffer a running plugin writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// plugin runs `kubectl firebolt args…` in-process, as a person would from
// a shell with the scenario's kubeconfig and namespace: real client-go
// against the real API server, nothing faked. Its bound is the context's.
func (s *scenario) plugin(ctx context.Context, args ...string) pluginRun {
	var out, errOut lockedBuffer
	code := s.pluginTo(ctx, &out, &errOut, args...)
	return pluginRun{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

func (s *scenario) pluginTo(ctx context.Context, out, errOut *lockedBuffer, args ...string) int {
	args = append([]string{"--kubeconfig", cp.Kubeconfig, "-n", s.ns}, args...)
	code := kubectlfirebolt.Run(ctx, args, out, errOut, kubectlfirebolt.NewClients)
	s.t.Logf("kubectl firebolt %s: exit %d\n%s%s", strings.Join(args[4:], " "), code, out.String(), errOut.String())
	return code
}

// mustPlugin runs the plugin and fails the test unless it exits 0.
func (s *scenario) mustPlugin(args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, rolloutTimeout+time.Minute)
	defer cancel()
	r := s.plugin(ctx, args...)
	if r.Code != 0 {
		s.t.Fatalf("kubectl firebolt %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return r.Stdout
}

// applyEngineSpec server-side applies spec onto engine name's claim as the
// test's user: only these fields, the plugin's own untouched.
func (s *scenario) applyEngineSpec(name string, spec map[string]any) {
	s.t.Helper()
	s.apply(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngine",
		"metadata": map[string]any{"name": name, "namespace": s.ns},
		"spec":     spec,
	}})
}

// phaseLine is a progress line of a wait; doneLine its last line.
var (
	phaseLine = regexp.MustCompile(`^fireboltengine/(\w+): (creating|switching|draining|cleaning|stable|stopped|updating|no phase yet) \(spec generation \d+, \d+ in effect\)$`)
	doneLine  = regexp.MustCompile(`^fireboltengine/(\w+): stable and Ready, generation (\d+) of the spec in effect$`)
)

// checkWaitOutput checks a wait's output: phase lines, each different
// from the one before, then the line saying the spec is in effect; it
// returns the phases seen.
func checkWaitOutput(t *testing.T, engine, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var phases []string
	for i, l := range lines {
		if i == len(lines)-1 {
			if m := doneLine.FindStringSubmatch(l); m == nil || m[1] != engine {
				t.Errorf("last line %q, want fireboltengine/%s: stable and Ready, …", l, engine)
			}
			break
		}
		m := phaseLine.FindStringSubmatch(l)
		if m == nil || m[1] != engine {
			t.Errorf("line %q is not a phase line of %s", l, engine)
			continue
		}
		if len(phases) > 0 && phases[len(phases)-1] == m[2] {
			t.Errorf("phase %s printed twice in a row:\n%s", m[2], out)
		}
		phases = append(phases, m[2])
	}
	return phases
}

// specInEffect reads the claim: its observedGeneration equals its
// generation, phase stable, Ready True.
func (s *scenario) checkSpecInEffect(eng *unstructured.Unstructured) {
	s.t.Helper()
	u, err := s.get(eng)
	s.must(err)
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	e := readEngine(u)
	if observed != u.GetGeneration() || e.Phase != "stable" || e.Ready.Status != "True" {
		s.t.Errorf("after the wait: generation %d, observed %d, %s", u.GetGeneration(), observed, e)
	}
}

// The kubectl plugin on the real control plane, driven in-process with
// the scenario's kubeconfig: instance list and id; engine create (server-
// side applied as kubectl-firebolt, waited for); engine list; engine wait
// through a rollout a replicas edit starts, printing the phases as they
// come; engine wake of an auto-stopped engine, waiting until it serves;
// engine status of a drain the fake pods hold, with the live drain check
// naming each busy pod; engine delete. Port-forward needs a kubelet, which
// KWOK's pods lack: TestPortForwardOverSPDY (internal/kubectlfirebolt) runs
// it through client-go's SPDY dialer against the kubelet's own port-forward
// server instead.
func TestPluginOnTheControlPlane(t *testing.T) {
	s := newScenario(t, "s-plugin")
	inst := s.instance("demo")
	s.apply(inst)
	s.waitInstanceReady(inst)

	if diff := cmp.Diff("NAME   PHASE   READY\ndemo   Ready   True\n", s.mustPlugin("instance", "list")); diff != "" {
		t.Errorf("instance list (-want +got):\n%s", diff)
	}
	u, err := s.get(inst)
	s.must(err)
	id, _, _ := unstructured.NestedString(u.Object, "status", "id")
	if got := s.mustPlugin("instance", "id", "demo"); id == "" || got != id+"\n" {
		t.Errorf("instance id printed %q, the claim's status.id is %q", got, id)
	}

	// Create: applied as kubectl-firebolt, then waited for.
	out := s.mustPlugin("engine", "create", "demo", "--instance", "demo", "--replicas", "2", "--bucket", "firebolt-demo", "--timeout", rolloutTimeout.String())
	if first, rest, _ := strings.Cut(out, "\n"); first != "fireboltengine/demo created" {
		t.Errorf("engine create's first line %q, want fireboltengine/demo created", first)
	} else {
		checkWaitOutput(t, "demo", rest)
	}
	demo := s.engineRef("demo")
	s.checkSpecInEffect(demo)
	u, err = s.get(demo)
	s.must(err)
	var applied bool
	for _, mf := range u.GetManagedFields() {
		applied = applied || (mf.Manager == kubectlfirebolt.FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !applied {
		t.Errorf("the claim has no fields applied by %s: %v", kubectlfirebolt.FieldManager, u.GetManagedFields())
	}
	if diff := cmp.Diff("NAME   INSTANCE   PHASE    READY   CLASS   REPLICAS\ndemo   demo       stable   True    -       2\n",
		s.mustPlugin("engine", "list", "-o", "wide")); diff != "" {
		t.Errorf("engine list -o wide (-want +got):\n%s", diff)
	}

	// An auto-stopped engine, to wake later: its idle clock runs while
	// demo rolls.
	sleepy := s.autoStopEngine("sleepy", func(as map[string]any) { as["idleTimeout"] = "40s" })
	s.apply(sleepy)
	if diff := cmp.Diff("fireboltengine/demo\nfireboltengine/sleepy\n", s.mustPlugin("engine", "list", "--instance", "demo", "-o", "name")); diff != "" {
		t.Errorf("engine list -o name (-want +got):\n%s", diff)
	}

	// Wait through a rollout: a replicas edit whose new pods are held
	// until the wait has printed the phase it holds in.
	st := s.waitEngine(demo, rolloutTimeout, "stable", func(e engineState) bool { return e.Phase == "stable" })
	s.applyEngineSpec("demo", map[string]any{"instanceRef": "demo", "replicas": int64(3),
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{harness.HoldLabel: "true"}}}})
	var waitOut, waitErr lockedBuffer
	waited := make(chan int, 1)
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, 2*rolloutTimeout)
		defer cancel()
		waited <- s.pluginTo(ctx, &waitOut, &waitErr, "engine", "wait", "demo", "--timeout", (2 * rolloutTimeout).String())
	}()
	s.wait(rolloutTimeout, "engine wait to print creating", func(context.Context) (bool, string, error) {
		return strings.Contains(waitOut.String(), ": creating ("), waitOut.String(), nil
	})
	st = s.waitEngine(demo, rolloutTimeout, "creating a new generation", func(e engineState) bool { return e.Phase == "creating" && e.Current != st.Active })
	s.release("demo", st.Current, 3)
	var code int
	select {
	case code = <-waited:
	case <-time.After(2*rolloutTimeout + time.Minute):
		t.Fatal("engine wait did not return")
	}
	if code != 0 {
		t.Fatalf("engine wait: exit %d\n%s", code, waitErr.String())
	}
	// The wait may start before the function has seen the edit, at the
	// old spec's stable.
	if phases := checkWaitOutput(t, "demo", waitOut.String()); !slices.Contains(phases, "creating") {
		t.Errorf("engine wait printed phases %v, want creating among them", phases)
	}
	s.checkSpecInEffect(demo)

	// A drain the fake pods hold: every pod of the serving generation
	// reports queries, and a replicas edit rolls past it.
	st = s.waitStable(demo, -1)
	held := st.Active
	cp.Pods.Set(s.ns, podPrefix("demo", held), harness.Behaviour{Mode: harness.Busy, Running: 5, Suspended: 1})
	s.applyEngineSpec("demo", map[string]any{"instanceRef": "demo", "replicas": int64(2)})
	st = s.waitEngine(demo, rolloutTimeout, "draining the busy generation", func(e engineState) bool {
		return e.Phase == "draining" && e.Drain == held && e.EngineReady.Reason == "Rolling"
	})
	var r kubectlfirebolt.EngineReport
	s.must(json.Unmarshal([]byte(s.mustPlugin("engine", "status", "demo", "-o", "json")), &r))
	s.checkHeldDrain(r, held, st.Active)
	text := s.mustPlugin("engine", "status", "demo")
	for _, want := range []string{
		"Phase:                draining\n",
		fmt.Sprintf("Drain:                generation %d waiting: kept until none of its pods serves a query", held),
		fmt.Sprintf("Drain (checked now):  busy: pod demo-g%d-0: 5 running, 1 suspended queries; pod demo-g%d-1: 5 running, 1 suspended queries; pod demo-g%d-2: 5 running, 1 suspended queries\n", held, held, held),
		"Next steps:\n  EngineReady Rolling: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("engine status does not say %q:\n%s", want, text)
		}
	}
	cp.Pods.Set(s.ns, podPrefix("demo", held), harness.Behaviour{Mode: harness.Idle})
	checkWaitOutput(t, "demo", s.mustPlugin("engine", "wait", "demo", "--timeout", rolloutTimeout.String()))

	// Wake the auto-stopped engine and wait until it serves.
	s.waitEngine(sleepy, rolloutTimeout, "auto-stopped", func(e engineState) bool {
		return e.Phase == "stopped" && e.EngineReady.Reason == "AutoStopped"
	})
	out = s.mustPlugin("engine", "wake", "sleepy", "--wait", "--timeout", rolloutTimeout.String())
	first, rest, _ := strings.Cut(out, "\n")
	m := regexp.MustCompile(`^fireboltengine/sleepy: wake requested \(firebolt.io/wake-requested=(\S+)\)$`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("engine wake's first line %q", first)
	}
	checkWaitOutput(t, "sleepy", rest)
	u, err = s.get(sleepy)
	s.must(err)
	if got := u.GetAnnotations()["firebolt.io/wake-requested"]; got != m[1] {
		t.Errorf("the claim's wake stamp %q, the plugin printed %q", got, m[1])
	}
	if _, err := time.Parse(time.RFC3339, m[1]); err != nil {
		t.Errorf("wake stamp %q is not RFC 3339: %v", m[1], err)
	}
	if a := readAutoStop(u); a.Replicas != 2 {
		t.Errorf("after the wake: %s, want 2 replicas", a)
	}

	if got := s.mustPlugin("engine", "delete", "sleepy"); got != "fireboltengine \"sleepy\" deleted\n" {
		t.Errorf("engine delete printed %q", got)
	}
	// It waits, as kubectl delete does, until Crossplane's finalizer let
	// the claim go.
	if u, err := s.get(sleepy); u != nil || err != nil {
		t.Errorf("engine delete returned while the claim is still there (%v)", err)
	}
}

// checkHeldDrain checks engine status's report of a drain held by busy
// pods: the function's verdict from the claim, the live check's per pod,
// and the pods of both generations.
func (s *scenario) checkHeldDrain(r kubectlfirebolt.EngineReport, held, active int64) {
	s.t.Helper()
	if r.Phase != "draining" || r.DrainingGeneration == nil || int64(*r.DrainingGeneration) != held || int64(r.ActiveGeneration) != active {
		s.t.Errorf("report: phase %s, draining %v, active %d; want draining %d, active %d", r.Phase, r.DrainingGeneration, r.ActiveGeneration, held, active)
	}
	if r.Drain == nil || r.Drain.Live == nil {
		s.t.Fatalf("no drain report, or no live check: %+v", r.Drain)
	}
	pods := make([]kubectlfirebolt.PodQueries, 0, 3)
	for i := range 3 {
		pods = append(pods, kubectlfirebolt.PodQueries{Pod: fmt.Sprintf("demo-g%d-%d", held, i), Running: 5, Suspended: 1})
	}
	if diff := cmp.Diff(pods, r.Drain.Live.Pods); diff != "" || r.Drain.Verdict != "waiting" || r.Drain.Live.Verdict != "busy" {
		s.t.Errorf("drain: verdict %s, live %s; pods (-want +got):\n%s", r.Drain.Verdict, r.Drain.Live.Verdict, diff)
	}
	gens := map[int64]kubectlfirebolt.GenerationPods{}
	for _, g := range r.Generations {
		gens[int64(g.Generation)] = g
	}
	if g := gens[held]; g.Ready != 3 || g.Desired == nil || *g.Desired != 3 || !cmp.Equal(g.Roles, []string{"draining"}) {
		s.t.Errorf("held generation %d: %+v, want 3 of 3 ready, role draining", held, g)
	}
	if g := gens[active]; g.Ready != 2 || g.Desired == nil || *g.Desired != 2 || !cmp.Equal(g.Roles, []string{"current", "active"}) {
		s.t.Errorf("active generation %d: %+v, want 2 of 2 ready, roles current and active", active, g)
	}
	for _, c := range r.Conditions {
		if c.Type == "EngineReady" && (c.Reason != "Rolling" || c.Action == "" || c.Meaning == "") {
			s.t.Errorf("EngineReady %+v, want Rolling with the catalogue's meaning and action", c)
		}
	}
}
