package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Bounds of the waits. They are generous: the machine is small and shared,
// and a crash-recovery scenario may restart Crossplane or the function
// while others run. A wait ends as soon as its condition holds.
const (
	instanceReadyTimeout = 4 * time.Minute
	rolloutTimeout       = 4 * time.Minute
	deletionTimeout      = 3 * time.Minute
)

// Labels the engine composer puts on every object of a generation.
const (
	labelEngine     = "firebolt.io/engine"
	labelGeneration = "firebolt.io/generation"
)

// scenario is one test's view of the shared stack: its own namespace, and
// on failure a dump of that namespace and of what Crossplane and the
// function logged while it ran.
type scenario struct {
	t   *testing.T
	ctx context.Context
	ns  string
}

// newScenario creates namespace ns for the calling test, which runs in
// parallel with the other scenarios: each keeps to its own namespace.
func newScenario(t *testing.T, ns string) *scenario {
	t.Helper()
	t.Parallel()
	return startScenario(t, ns)
}

// newSoloScenario is newScenario for a test that kills processes every
// scenario shares (Crossplane, the function): it runs alone, before the
// parallel scenarios start, so no other scenario's premise depends on it.
func newSoloScenario(t *testing.T, ns string) *scenario {
	t.Helper()
	return startScenario(t, ns)
}

func startScenario(t *testing.T, ns string) *scenario {
	t.Helper()
	if cp == nil {
		t.Fatal("the stack is not running")
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &scenario{t: t, ctx: ctx, ns: ns}
	offsets := map[string]int64{}
	for _, p := range cp.Processes() {
		offsets[p.Name] = p.LogSize()
	}
	started := time.Now()
	t.Cleanup(func() {
		defer cancel()
		// A broken premise of the fakes fails the scenario loudly, whatever
		// it asserted: what its pods answered cannot be trusted.
		for _, a := range cp.Pods.Anomalies(ns, started) {
			t.Errorf("harness: %s", a)
		}
		if !t.Failed() {
			return
		}
		dctx, dcancel := context.WithTimeout(context.Background(), time.Minute)
		defer dcancel()
		t.Logf("===== state of namespace %s\n%s", ns, cp.Describe(dctx, ns))
		// Other scenarios log meanwhile: keep the lines naming this
		// namespace or one of its composites, and every harness line.
		keys := append([]string{`"` + ns + `"`, "===== harness"}, cp.CompositeNames(dctx, ns)...)
		relevant := func(line string) bool {
			for _, k := range keys {
				if strings.Contains(line, k) {
					return true
				}
			}
			return false
		}
		for _, name := range []string{"function", "crossplane"} {
			p := cp.Process(name)
			t.Logf("===== %s log lines about %s while %s ran (full log: %s)\n%s", name, ns, t.Name(), p.Log, p.LogLines(offsets[name], 200, relevant))
		}
	})
	_, err := cp.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	s.must(err)
	return s
}

func (s *scenario) must(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

// wait is harness.Wait failing the test.
func (s *scenario) wait(timeout time.Duration, what string, check harness.Check) {
	s.t.Helper()
	s.must(harness.Wait(s.ctx, timeout, what, check))
}

// example reads an example claim, the way a user starts, and moves it into
// this scenario's namespace under name.
func (s *scenario) example(file, name string) *unstructured.Unstructured {
	s.t.Helper()
	objs, err := harness.ReadObjects(filepath.Join(harness.Root(), "examples", "claims", file))
	s.must(err)
	if len(objs) != 1 {
		s.t.Fatalf("examples/claims/%s holds %d objects, want 1", file, len(objs))
	}
	u := objs[0]
	u.SetNamespace(s.ns)
	u.SetName(name)
	return u
}

// instance is the example instance.
func (s *scenario) instance(name string) *unstructured.Unstructured {
	return s.example("instance.yaml", name)
}

// engine is the example engine of instance, without a class unless class is
// set, with replicas replicas.
func (s *scenario) engine(name, instance, class string, replicas int64) *unstructured.Unstructured {
	s.t.Helper()
	u := s.example("engine.yaml", name)
	set(s.t, u, instance, "spec", "instanceRef")
	set(s.t, u, replicas, "spec", "replicas")
	if class == "" {
		unstructured.RemoveNestedField(u.Object, "spec", "engineClassRef")
	} else {
		set(s.t, u, class, "spec", "engineClassRef")
	}
	return u
}

func set(t *testing.T, u *unstructured.Unstructured, v any, path ...string) {
	t.Helper()
	if err := unstructured.SetNestedField(u.Object, v, path...); err != nil {
		t.Fatalf("cannot set %s: %v", strings.Join(path, "."), err)
	}
}

func (s *scenario) apply(u *unstructured.Unstructured) *unstructured.Unstructured {
	s.t.Helper()
	out, err := cp.Apply(s.ctx, u)
	s.must(err)
	return out
}

// get reads the current state of u; nil when it does not exist.
func (s *scenario) get(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := cp.Get(s.ctx, u)
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	return out, err
}

// waitInstanceReady waits for the instance claim's phase Ready and
// Crossplane's Ready condition.
func (s *scenario) waitInstanceReady(inst *unstructured.Unstructured) {
	s.t.Helper()
	s.wait(instanceReadyTimeout, "FireboltInstance "+inst.GetName()+" Ready", func(context.Context) (bool, string, error) {
		u, err := s.get(inst)
		if err != nil || u == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		ready := harness.Condition(u, "Ready")
		return phase == "Ready" && ready.Status == "True",
			fmt.Sprintf("phase=%q Ready=%s MetadataReady=%s GatewayReady=%s Synced=%s", phase, ready,
				harness.Condition(u, "MetadataReady"), harness.Condition(u, "GatewayReady"), harness.Condition(u, "Synced")), nil
	})
}

// engineState is what the tests read of an engine claim.
type engineState struct {
	Phase                  string
	Current, Active, Drain int64
	EngineReady            harness.Cond
	Ready                  harness.Cond
	Synced                 harness.Cond
}

func (e engineState) String() string {
	return fmt.Sprintf("phase=%q current=%d active=%d draining=%d EngineReady=%s Ready=%s Synced=%s",
		e.Phase, e.Current, e.Active, e.Drain, e.EngineReady, e.Ready, e.Synced)
}

func readEngine(u *unstructured.Unstructured) engineState {
	i := func(f string) int64 { v, _, _ := unstructured.NestedInt64(u.Object, "status", f); return v }
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return engineState{
		Phase: phase, Current: i("currentGeneration"), Active: i("activeGeneration"), Drain: i("drainingGeneration"),
		EngineReady: harness.Condition(u, "EngineReady"), Ready: harness.Condition(u, "Ready"), Synced: harness.Condition(u, "Synced"),
	}
}

// waitEngine polls the engine claim until done accepts its state.
func (s *scenario) waitEngine(eng *unstructured.Unstructured, timeout time.Duration, what string, done func(engineState) bool) engineState {
	s.t.Helper()
	var last engineState
	s.wait(timeout, "FireboltEngine "+eng.GetName()+" "+what, func(context.Context) (bool, string, error) {
		u, err := s.get(eng)
		if err != nil || u == nil {
			return false, fmt.Sprintf("claim: %v", err), nil
		}
		last = readEngine(u)
		return done(last), last.String() + " " + s.generations(eng.GetName()).String(), nil
	})
	return last
}

// waitStable waits until the engine serves on a generation newer than
// after: phase stable, EngineReady True, Ready True, and only that
// generation's objects left.
func (s *scenario) waitStable(eng *unstructured.Unstructured, after int64) engineState {
	s.t.Helper()
	st := s.waitEngine(eng, rolloutTimeout, fmt.Sprintf("stable on a generation after %d", after), func(e engineState) bool {
		if e.Phase != "stable" || e.Active <= after || e.EngineReady.Status != "True" || e.Ready.Status != "True" {
			return false
		}
		g := s.generations(eng.GetName())
		return len(g.StatefulSets) == 1 && g.StatefulSets[0] == e.Active
	})
	return st
}

// generations lists the generations of an engine's objects that exist.
type generations struct {
	StatefulSets, Services, ConfigMaps []int64
	// Selector is the routing Service's generation, -1 without one.
	Selector int64
}

func (g generations) String() string {
	return fmt.Sprintf("[sts gens %v, headless svc gens %v, configmap gens %v, routing selector %d]", g.StatefulSets, g.Services, g.ConfigMaps, g.Selector)
}

// generations lists the engine's objects by generation label, and the
// generation its routing Service selects. A List that fails is retried,
// never read as "no objects": under load, or
// while the crash scenario restarts Crossplane, the API server can fail a
// List, and an empty answer would read as every generation deleted.
func (s *scenario) generations(engine string) generations {
	s.t.Helper()
	var g generations
	s.wait(time.Minute, "listing the objects of engine "+engine, func(ctx context.Context) (bool, string, error) {
		var err error
		if g, err = s.listGenerations(ctx, engine); err != nil {
			return false, fmt.Sprintf("error: %v", err), nil
		}
		return true, "", nil
	})
	return g
}

func (s *scenario) listGenerations(ctx context.Context, engine string) (generations, error) {
	g := generations{Selector: -1}
	sel := metav1.ListOptions{LabelSelector: labelEngine + "=" + engine}
	gen := func(m metav1.Object) (int64, bool) {
		v, ok := m.GetLabels()[labelGeneration]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	sts, err := cp.Kube.AppsV1().StatefulSets(s.ns).List(ctx, sel)
	if err != nil {
		return g, err
	}
	for i := range sts.Items {
		if n, ok := gen(&sts.Items[i]); ok {
			g.StatefulSets = append(g.StatefulSets, n)
		}
	}
	svcs, err := cp.Kube.CoreV1().Services(s.ns).List(ctx, sel)
	if err != nil {
		return g, err
	}
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		if svc.Name == engine+"-service" {
			if v, err := strconv.ParseInt(svc.Spec.Selector[labelGeneration], 10, 64); err == nil {
				g.Selector = v
			}
			continue
		}
		if n, ok := gen(svc); ok {
			g.Services = append(g.Services, n)
		}
	}
	cms, err := cp.Kube.CoreV1().ConfigMaps(s.ns).List(ctx, sel)
	if err != nil {
		return g, err
	}
	for i := range cms.Items {
		if n, ok := gen(&cms.Items[i]); ok {
			g.ConfigMaps = append(g.ConfigMaps, n)
		}
	}
	for _, l := range [][]int64{g.StatefulSets, g.Services, g.ConfigMaps} {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	return g, nil
}

// pods returns the engine's pods of generation gen.
func (s *scenario) pods(engine string, gen int64) []corev1.Pod {
	l, err := cp.Kube.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{
		LabelSelector: fmt.Sprintf("%s=%s,%s=%d", labelEngine, engine, labelGeneration, gen),
	})
	if err != nil {
		return nil
	}
	return l.Items
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// release lets the held pods of a generation become Ready.
func (s *scenario) release(engine string, gen int64, want int) {
	s.t.Helper()
	s.releasePods(fmt.Sprintf("%s=%s,%s=%d", labelEngine, engine, labelGeneration, gen), want)
}

// releasePods removes the hold label from every pod selector matches, as
// the pods appear, until want of them exist and all are Ready.
func (s *scenario) releasePods(selector string, want int) {
	s.t.Helper()
	s.wait(rolloutTimeout, fmt.Sprintf("%d pod(s) %s released and Ready", want, selector), func(ctx context.Context) (bool, string, error) {
		l, err := cp.Kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, fmt.Sprintf("cannot list pods: %v", err), nil
		}
		ready, live := 0, 0
		for i := range l.Items {
			p := &l.Items[i]
			if p.DeletionTimestamp != nil {
				continue
			}
			live++
			if _, held := p.Labels[harness.HoldLabel]; held {
				patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, harness.HoldLabel)
				if _, err := cp.Kube.CoreV1().Pods(s.ns).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					return false, fmt.Sprintf("cannot release %s: %v", p.Name, err), nil
				}
			}
			if podReady(p) {
				ready++
			}
		}
		return ready == want && live == want, fmt.Sprintf("%d pods, %d ready", live, ready), nil
	})
}

// releasePod waits for a held pod, lets it become Ready, and waits until it
// is.
func (s *scenario) releasePod(name string) {
	s.t.Helper()
	s.wait(rolloutTimeout, "pod "+name+" released and Ready", func(ctx context.Context) (bool, string, error) {
		p, err := cp.Kube.CoreV1().Pods(s.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		if _, held := p.Labels[harness.HoldLabel]; held {
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, harness.HoldLabel)
			if _, err := cp.Kube.CoreV1().Pods(s.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				return false, fmt.Sprintf("cannot release: %v", err), nil
			}
			return false, "released", nil
		}
		return podReady(p), fmt.Sprintf("phase %s, ready %v", p.Status.Phase, podReady(p)), nil
	})
}

// consistently checks cond on every poll until until says the observation
// is long enough, and fails at the first poll where cond does not hold.
func (s *scenario) consistently(timeout time.Duration, what string, cond func() (bool, string), until func() bool) {
	s.t.Helper()
	s.wait(timeout, what, func(context.Context) (bool, string, error) {
		ok, seen := cond()
		if !ok {
			return false, seen, fmt.Errorf("violated: %s", what)
		}
		return until(), seen, nil
	})
}

// functionCalls counts the function's log lines that name a composite: the
// function logs every call at debug level, so this grows with every
// RunFunction for it. Observations that something does not happen are
// bounded by it, not by wall time.
func (s *scenario) functionCalls(composite string) int {
	b, err := os.ReadFile(cp.Process("function").Log)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte(`"`+composite+`"`))
}

// callsSince is an until-condition for consistently: true once the
// function has been called n more times for composite than the calls
// count given. A resting engine is called only on events (its timer is
// 30 m), so while the count is short each check gives the composite one
// event of its own, an annotation the function ignores; a composite that
// is progressing is called on its timers anyway.
func (s *scenario) callsSince(composite string, calls, n int) func() bool {
	poke := 0
	return func() bool {
		if s.functionCalls(composite) >= calls+n {
			return true
		}
		poke++
		ri, err := cp.Resource(harness.XEngineGVK, "")
		s.must(err)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.firebolt.io/nudge":"%d-%d"}}}`, calls, poke)
		_, err = ri.Patch(s.ctx, composite, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		s.must(err)
		return false
	}
}

// withHold adds the hold label to the engine's pod template, so the pods of
// the generation this spec creates stay Pending until released.
func withHold(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u = u.DeepCopy()
	labels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
	if labels == nil {
		labels = map[string]string{}
	}
	labels[harness.HoldLabel] = "true"
	m := map[string]any{}
	for k, v := range labels {
		m[k] = v
	}
	set(t, u, m, "spec", "template", "metadata", "labels")
	return u
}

// podPrefix is the name prefix of a generation's pods, which the fake
// engine servers match on.
func podPrefix(engine string, gen int64) string { return fmt.Sprintf("%s-g%d-", engine, gen) }

// stableEngine applies the example instance and, once it is ready, an
// engine of it with replicas replicas, and waits until the engine is stable.
func (s *scenario) stableEngine(name string, replicas int64) (*unstructured.Unstructured, engineState) {
	s.t.Helper()
	inst := s.instance("demo")
	s.apply(inst)
	s.waitInstanceReady(inst)
	eng := s.engine(name, "demo", "", replicas)
	s.apply(eng)
	return eng, s.waitStable(eng, -1)
}

// selectorIs waits until the routing Service selects generation gen.
func (s *scenario) waitSelector(engine string, gen int64) {
	s.t.Helper()
	s.wait(rolloutTimeout, fmt.Sprintf("the routing Service of %s to select generation %d", engine, gen), func(context.Context) (bool, string, error) {
		g := s.generations(engine)
		return g.Selector == gen, g.String(), nil
	})
}

// settled tells whether a claim's status is one function response's.
// Crossplane writes a composite's status fields and its conditions in two
// requests, and copies them to the claim as they change, so for a moment the
// phase can be the newest response's and EngineReady the one before (a
// Rolling condition names the phase it was computed in). And while the
// function is down (the crash scenario kills it) Crossplane marks the
// function's conditions Unknown with reason FatalError.
func settled(e engineState) bool {
	switch e.EngineReady.Reason {
	case "FatalError":
		return false
	case "Rolling":
		return strings.Contains(e.EngineReady.Message, " "+e.Phase+" ")
	}
	return true
}

// gatewayPod is a live pod of instance inst's gateway, as the API server
// stored it.
func (s *scenario) gatewayPod(inst string) *corev1.Pod {
	s.t.Helper()
	var pod *corev1.Pod
	s.wait(rolloutTimeout, "a gateway pod of instance "+inst, func(ctx context.Context) (bool, string, error) {
		l, err := cp.Kube.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "firebolt.io/component=gateway,firebolt.io/instance=" + inst})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		for i := range l.Items {
			if l.Items[i].DeletionTimestamp == nil {
				pod = &l.Items[i]
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d pods, none live", len(l.Items)), nil
	})
	return pod
}
