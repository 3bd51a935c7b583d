package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
	"github.com/firebolt-db/firebolt-crossplane/test/scale"
)

const (
	namespace = "scale"
	// The example claims make up applies: one instance, class standard.
	instanceFile = "instance.yaml"
	classFile    = "engineclass.yaml"
	engineFile   = "engine.yaml"
	credentials  = "demo-s3-credentials"

	// startTimeout bounds bringing the stack up and the instance Ready.
	startTimeout    = 10 * time.Minute
	instanceTimeout = 5 * time.Minute

	// pollEvery is how often the waits read the watched engines.
	pollEvery = 2 * time.Second

	// createWorkers apply the engines at once, as a script running
	// `kubectl apply` in a few shells would.
	createWorkers = 4

	// crossplaneMetrics is Crossplane's metrics endpoint (the harness sets
	// METRICS_PORT=8085).
	crossplaneMetrics = "http://127.0.0.1:8085/metrics"
	breakerOpens      = "circuit_breaker_opens_total"
	breakerLogLine    = "Circuit breaker is open"

	// editedTeam is what the class edit sets the class's pod label to: a
	// change of the pod template every engine inherits, so each rolls a
	// new generation.
	editedTeam = "analytics-scale-edit"
)

// processes whose CPU time the report shows, in its order.
var processes = []string{"kube-apiserver", "etcd", "crossplane", "function", "kwok", "kube-controller-manager", "kube-scheduler", harness.CertManagerProcess}

// harnessProcess is this program: the fake engine pods, the volume
// provisioner and the waits.
const harnessProcess = "harness (fake pods, waits)"

func measure(ctx context.Context, cfg config, work string) error {
	if work == "" {
		return errors.Errorf("%s is not set: run scale without it, it sets it for its copy in the network namespace", envWork)
	}
	tools, err := harness.DecodeTools(os.Getenv(harness.EnvTools))
	if err != nil {
		return err
	}
	if err := harness.SetupLoopback(); err != nil {
		return err
	}
	own := scale.NewOwn()
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	opts := []harness.Option{harness.WithTransport(own.Wrap)}
	audit := filepath.Join(work, "audit.log")
	if cfg.audit {
		opts = append(opts, harness.WithAuditLog(audit))
	}
	if len(cfg.crossplaneFlags) > 0 {
		opts = append(opts, harness.WithCrossplaneFlags(cfg.crossplaneFlags...))
	}
	c, err := harness.Start(sctx, tools, filepath.Join(work, "stack"), os.Stderr, opts...)
	if err != nil {
		return err
	}
	defer c.Stop()
	m := &meter{c: c, own: own, cfg: cfg}
	if err := m.prepare(sctx); err != nil {
		return err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := m.watch(wctx); err != nil {
		return err
	}
	rep, err := m.run(ctx)
	// A run that timed out still reports what it measured: which
	// component was busy is what a timeout needs explained.
	if len(rep.Phases) > 0 {
		md := fmt.Sprintf("Command: `%s`\n\n%s", command(cfg), rep.Markdown())
		if cfg.audit {
			a, aerr := auditReport(audit, rep)
			if aerr != nil && err == nil {
				err = aerr
			}
			md += "\n" + a
		}
		fmt.Print("\n" + md)
		if cfg.out != "" {
			if werr := os.WriteFile(cfg.out, []byte(md), 0o644); werr != nil && err == nil {
				err = errors.Wrapf(werr, "cannot write %s", cfg.out)
			}
		}
	}
	return errors.Wrapf(err, "(logs of every process in %s)", filepath.Join(work, "stack", "logs"))
}

// profileAPIServer takes a CPU profile of kube-apiserver (its
// /debug/pprof, on by default) over cfg.profileFor from now, the start of
// the create, into cfg.profile, in the background. The channel closes when
// it is done; nothing is profiled without -profile.
func (m *meter) profileAPIServer(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if m.cfg.profile == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		// The harness's clients time out in 30 s; this one waits as long
		// as the profile takes, and no longer.
		cfg := rest.CopyConfig(m.c.Admin)
		cfg.Timeout = m.cfg.profileFor + 30*time.Second
		kube, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			m.logf("cannot profile kube-apiserver: %v", err)
			return
		}
		pctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		b, err := kube.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(m.cfg.profileFor.Seconds()))).DoRaw(pctx)
		if err == nil {
			err = os.WriteFile(m.cfg.profile, b, 0o644)
		}
		if err != nil {
			m.logf("cannot profile kube-apiserver: %v", err)
			return
		}
		m.logf("kube-apiserver's CPU profile of the create's first %s in %s", m.cfg.profileFor, m.cfg.profile)
	}()
	return done
}

// auditReport is the writes of each phase by writer, from the audit log.
func auditReport(path string, rep *scale.Report) (string, error) {
	names := make([]string, 0, len(rep.Phases))
	writes := make([]scale.AuditWrites, 0, len(rep.Phases))
	for _, p := range rep.Phases {
		f, err := os.Open(path)
		if err != nil {
			return "", errors.Wrap(err, "cannot open the audit log")
		}
		w, err := scale.ParseAudit(f, p.From, p.To)
		_ = f.Close()
		if err != nil {
			return "", err
		}
		names = append(names, p.Name)
		writes = append(writes, w)
	}
	return scale.AuditMarkdown(names, writes, rep.Engines, rep.TopRequests), nil
}

// command is the make command a run of cfg's phases is, for the report.
func command(cfg config) string {
	var flags []string
	if cfg.auth {
		flags = append(flags, "-auth")
	}
	if cfg.audit {
		flags = append(flags, "-audit")
	}
	for _, f := range cfg.crossplaneFlags {
		flags = append(flags, "-crossplane-flag="+f)
	}
	if len(flags) == 0 {
		return fmt.Sprintf("make scale N=%d", cfg.engines)
	}
	return fmt.Sprintf("make scale N=%d SCALE_FLAGS=%q", cfg.engines, strings.Join(flags, " "))
}

type meter struct {
	c   *harness.Cluster
	own *scale.Own
	cfg config

	instance *unstructured.Unstructured
	class    *unstructured.Unstructured
	engine   *unstructured.Unstructured

	// The engine claims, their composites, and the engines' StatefulSets
	// and pods, as the watches see them.
	claims, xrs, sets, pods *watched

	// workload counts the claim applies of the measurement itself (the
	// engines, the class edit): requests a user would make, so they stay
	// in the figures though the harness's transport counts them as its own.
	workloadMu sync.Mutex
	workload   scale.Counts

	// lastStable is how many engines the last check found done.
	lastStable int

	// How far Crossplane's log was read, and the breaker lines in it.
	logRead    int64
	breakerLog int

	// How far the function's log was read, and the calls for the
	// instance's composite in it (the rotation phase counts them).
	fnLogRead     int64
	instanceCalls int
}

func (m *meter) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s scale: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// prepare applies what `make up` applies before its engine: the namespace,
// the storage credentials Secret, the example instance and class; and waits
// until the instance is Ready.
func (m *meter) prepare(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := m.c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrap(err, "cannot create the namespace")
	}
	creds := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: credentials, Namespace: namespace},
		StringData: map[string]string{"access-key-id": "local", "secret-access-key": "local"},
	}
	if _, err := m.c.Kube.CoreV1().Secrets(namespace).Create(ctx, creds, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrap(err, "cannot create the credentials Secret")
	}
	read := func(file string) (*unstructured.Unstructured, error) {
		path := filepath.Join(m.c.Tools.Root, "examples", "claims", file)
		objs, err := harness.ReadObjects(path)
		if err != nil {
			return nil, err
		}
		if len(objs) != 1 {
			return nil, errors.Errorf("%s holds %d objects, want 1", path, len(objs))
		}
		objs[0].SetNamespace(namespace)
		return objs[0], nil
	}
	inst, err := read(instanceFile)
	if err != nil {
		return err
	}
	if m.cfg.auth {
		if err := m.prepareAuth(ctx, inst); err != nil {
			return err
		}
	}
	m.instance = inst
	if m.class, err = read(classFile); err != nil {
		return err
	}
	if m.engine, err = read(engineFile); err != nil {
		return err
	}
	for _, u := range []*unstructured.Unstructured{inst, m.class} {
		if _, err := m.c.Apply(ctx, u); err != nil {
			return err
		}
	}
	m.logf("applied the example instance and class in namespace %s; waiting for the instance", namespace)
	return harness.Wait(ctx, instanceTimeout, "FireboltInstance "+inst.GetName()+" Ready", func(ctx context.Context) (bool, string, error) {
		u, err := m.c.Get(ctx, inst)
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		r := harness.Condition(u, "Ready")
		ready := phase == "Ready" && r.Status == "True"
		seen := fmt.Sprintf("phase=%q Ready=%s", phase, r)
		if m.cfg.auth {
			// Engines wait while AuthReady is not True: waiting here
			// keeps the first key's issuance out of the create phase.
			a := harness.Condition(u, "AuthReady")
			ready = ready && a.Status == "True"
			seen += " AuthReady=" + a.String()
		}
		return ready, seen, nil
	})
}

// watch starts the watches the waits read: the engine claims of the
// measured namespace, their composites, and the engines' StatefulSets and
// pods.
func (m *meter) watch(ctx context.Context) error {
	ri, err := m.c.Resource(harness.EngineGVK, namespace)
	if err != nil {
		return err
	}
	if m.claims, err = watchResource(ctx, "engine claims", ri, ""); err != nil {
		return err
	}
	if ri, err = m.c.Resource(harness.XEngineGVK, ""); err != nil {
		return err
	}
	if m.xrs, err = watchResource(ctx, "engine composites", ri, "crossplane.io/claim-namespace="+namespace); err != nil {
		return err
	}
	if m.sets, err = watchResource(ctx, "engine StatefulSets", m.c.Dyn.Resource(appsv1.SchemeGroupVersion.WithResource("statefulsets")).Namespace(namespace), contract.LabelEngine); err != nil {
		return err
	}
	m.pods, err = watchResource(ctx, "engine pods", m.c.Dyn.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace(namespace), contract.LabelEngine)
	return err
}

// engineWorkload counts the engines' StatefulSets, and what of them and of
// their pods is being deleted.
func (m *meter) engineWorkload() (scale.Workload, error) {
	var w scale.Workload
	sets, err := m.sets.items()
	if err != nil {
		return w, err
	}
	pods, err := m.pods.items()
	if err != nil {
		return w, err
	}
	w.StatefulSets = len(sets)
	for _, u := range append(sets, pods...) {
		if u.GetDeletionTimestamp() != nil {
			w.Terminating++
		}
	}
	return w, nil
}

// run measures the three phases, and with cfg.auth the rotation after them. The report it returns holds the phases
// measured so far also when it fails; a phase that timed out is among them.
func (m *meter) run(ctx context.Context) (*scale.Report, error) {
	rep := &scale.Report{Engines: m.cfg.engines, Processes: append(append([]string(nil), processes...), harnessProcess), TopRequests: 30}

	s0, err := m.snapshot(ctx)
	if err != nil {
		return rep, err
	}
	m.logf("creating %d engines", m.cfg.engines)
	profiled := m.profileAPIServer(ctx)
	defer func() { <-profiled }()
	if err := m.createEngines(ctx); err != nil {
		return rep, err
	}
	name := fmt.Sprintf("create %d", m.cfg.engines)
	active, err := m.waitStable(ctx, m.cfg.createTimeout, "all engines stable after creation", nil)
	if err != nil {
		return m.timedOut(ctx, rep, name, s0, err)
	}
	s1, err := m.snapshot(ctx)
	if err != nil {
		return rep, err
	}
	create, err := phase(name, s0, s1, true)
	if err != nil {
		return rep, err
	}
	rep.Phases = append(rep.Phases, create)
	m.logf("all %d engines stable %s after the first create", m.cfg.engines, create.Took.Round(100*time.Millisecond))

	if err := m.editClass(ctx); err != nil {
		return rep, err
	}
	m.logf("edited class %s (pod label team=%s): every engine rolls", m.class.GetName(), editedTeam)
	if _, err := m.waitStable(ctx, m.cfg.editTimeout, "all engines stable on a new generation after the class edit", active); err != nil {
		return m.timedOut(ctx, rep, "class edit", s1, err)
	}
	s2, err := m.snapshot(ctx)
	if err != nil {
		return rep, err
	}
	edit, err := phase("class edit", s1, s2, true)
	if err != nil {
		return rep, err
	}
	rep.Phases = append(rep.Phases, edit)
	m.logf("all %d engines stable on a new generation %s after the class edit", m.cfg.engines, edit.Took.Round(100*time.Millisecond))

	steady, err := m.waitSteady(ctx)
	if err != nil {
		return rep, err
	}
	s2, err = m.snapshot(ctx)
	if err != nil {
		return rep, err
	}
	m.logf("idling %s from %s", m.cfg.idle, steady)
	select {
	case <-ctx.Done():
		return rep, ctx.Err()
	case <-time.After(m.cfg.idle):
	}
	s3, err := m.snapshot(ctx)
	if err != nil {
		return rep, err
	}
	idle, err := phase(fmt.Sprintf("idle %.0f s", m.cfg.idle.Seconds()), s2, s3, false)
	if err != nil {
		return rep, err
	}
	idle.Steady = steady
	rep.Phases = append(rep.Phases, idle)
	if err := m.peakMemory(rep); err != nil {
		return rep, err
	}
	// Still stable after the idle time: an engine that moved while idle
	// would make the idle figures a rollout's.
	if seen, ok, err := m.stable(active); err != nil || !ok {
		return rep, errors.Errorf("engines left stable while idle: %s (%v)", seen, err)
	}
	if m.cfg.auth {
		return m.rotation(ctx, rep)
	}
	return rep, nil
}

// waitSteady waits, within cfg.steadyTimeout, until the engines are in
// steady state (scale.Steady: no composite's circuit breaker open, no
// status change within cfg.quiet), so that the idle figures are a resting
// engine's, not the tail of the class edit's rollouts. It says what the
// idle time starts from; when the bound passes first, that is what was not
// steady, and the idle time is measured anyway, so the cost of it shows.
func (m *meter) waitSteady(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.steadyTimeout)
	defer cancel()
	start := time.Now()
	seen := "(nothing yet)"
	for {
		if err := m.running(); err != nil {
			return "", err
		}
		cs, err := m.composites()
		var w scale.Workload
		if err == nil {
			w, err = m.engineWorkload()
		}
		if err == nil {
			ok, why := scale.Steady(cs, w, m.cfg.engines, time.Now(), m.cfg.quiet)
			if ok {
				m.logf("steady state after %s: %s", time.Since(start).Round(time.Second), why)
				return why, nil
			}
			seen = why
		} else if ctx.Err() == nil {
			seen = "error: " + err.Error()
		}
		select {
		case <-ctx.Done():
			if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
				return "", err
			}
			m.logf("no steady state within %s: %s", m.cfg.steadyTimeout, seen)
			return "NOT steady after " + m.cfg.steadyTimeout.String() + ": " + seen, nil
		case <-time.After(pollEvery):
		}
	}
}

// composites reads the engine composites of the measured namespace.
func (m *meter) composites() ([]scale.Composite, error) {
	xrs, err := m.xrs.items()
	if err != nil {
		return nil, err
	}
	cs := make([]scale.Composite, 0, len(xrs))
	for _, u := range xrs {
		c := scale.Composite{Name: u.GetName()}
		if s, _, _ := unstructured.NestedString(u.Object, "status", "lastReconciled"); s != "" {
			if c.LastReconciled, err = time.Parse(time.RFC3339, s); err != nil {
				return nil, errors.Wrapf(err, "cannot parse status.lastReconciled of %s", u.GetName())
			}
		}
		r := harness.Condition(u, "Responsive")
		c.BreakerOpen = r.Status == "False"
		cs = append(cs, c)
	}
	return cs, nil
}

// timedOut adds the phase that did not settle, measured until now, to the
// report, and returns the wait's error.
func (m *meter) timedOut(ctx context.Context, rep *scale.Report, name string, before *snap, waitErr error) (*scale.Report, error) {
	if ctx.Err() != nil {
		return rep, waitErr
	}
	after, err := m.snapshot(ctx)
	if err != nil {
		return rep, waitErr
	}
	p, err := phase(name, before, after, true)
	if err != nil {
		return rep, waitErr
	}
	p.TimedOut, p.Stable = true, m.lastStable
	rep.Phases = append(rep.Phases, p)
	_ = m.peakMemory(rep)
	return rep, waitErr
}

func (m *meter) peakMemory(rep *scale.Report) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.c.Process("function").Pid()))
	if err != nil {
		return errors.Wrap(err, "cannot read the function's memory")
	}
	rep.FunctionPeakRSS, err = scale.PeakRSSBytes(b)
	return err
}

// createEngines applies N engines named scale-0001... like the example
// engine, with one replica.
func (m *meter) createEngines(ctx context.Context) error {
	names := make(chan string)
	errs := make(chan error, createWorkers)
	var wg sync.WaitGroup
	for range createWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				u := m.engine.DeepCopy()
				u.SetName(name)
				if err := unstructured.SetNestedField(u.Object, int64(1), "spec", "replicas"); err != nil {
					errs <- err
					return
				}
				if _, err := m.c.Apply(ctx, u); err != nil {
					errs <- err
					return
				}
				m.countWorkload(u)
			}
		}()
	}
	var err error
feed:
	for i := 1; i <= m.cfg.engines; i++ {
		select {
		case names <- engineName(i):
		case err = <-errs:
			break feed
		}
	}
	close(names)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

func engineName(i int) string { return fmt.Sprintf("scale-%04d", i) }

// editClass changes the pod label the class gives every engine.
func (m *meter) editClass(ctx context.Context) error {
	u := m.class.DeepCopy()
	if err := unstructured.SetNestedField(u.Object, editedTeam, "spec", "template", "metadata", "labels", "team"); err != nil {
		return errors.Wrap(err, "cannot edit the class")
	}
	if _, err := m.c.Apply(ctx, u); err != nil {
		return err
	}
	m.countWorkload(u)
	return nil
}

// countWorkload records one server-side apply of u.
func (m *meter) countWorkload(u *unstructured.Unstructured) {
	m.workloadMu.Lock()
	defer m.workloadMu.Unlock()
	if m.workload == nil {
		m.workload = scale.Counts{}
	}
	m.workload[scale.Key{Group: u.GroupVersionKind().Group, Resource: plural[u.GetKind()], Verb: "APPLY"}]++
}

// plural names the resources of the kinds the measurement applies.
var plural = map[string]string{"FireboltEngine": "fireboltengines", "FireboltEngineClass": "fireboltengineclasses", "FireboltInstance": "fireboltinstances"}

// waitStable waits until every engine is stable (phase stable, EngineReady
// and Ready True, nothing draining) and, when after is set, active on a
// generation newer than after's. It returns each engine's active generation.
func (m *meter) waitStable(ctx context.Context, timeout time.Duration, what string, after map[string]int64) (map[string]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	seen := "(nothing yet)"
	for {
		if err := m.running(); err != nil {
			return nil, err
		}
		active, ok, s, err := m.check(after)
		if s != "" {
			seen = s
		}
		if err == nil && ok {
			return active, nil
		}
		if err != nil {
			seen = "error: " + err.Error()
		}
		select {
		case <-ctx.Done():
			return nil, errors.Errorf("timed out after %s waiting for %s; last saw: %s (raise the bound with -create-timeout or -edit-timeout)",
				time.Since(start).Round(time.Second), what, seen)
		case <-time.After(pollEvery):
		}
	}
}

// stable looks once.
func (m *meter) stable(after map[string]int64) (string, bool, error) {
	_, ok, seen, err := m.check(after)
	return seen, ok, err
}

// check reads the engines once and tells whether all are stable.
func (m *meter) check(after map[string]int64) (map[string]int64, bool, string, error) {
	claims, err := m.claims.items()
	if err != nil {
		return nil, false, "", err
	}
	active := map[string]int64{}
	phases := map[string]int{}
	var notYet []string
	for _, u := range claims {
		e := readEngine(u)
		active[u.GetName()] = e.active
		done := e.stable() && (after == nil || e.active > after[u.GetName()])
		if done {
			phases["stable"]++
			continue
		}
		p := e.phase
		if p == "stable" {
			p = "stable (old generation)"
		}
		phases[p]++
		notYet = append(notYet, u.GetName()+": "+e.String())
	}
	sort.Strings(notYet)
	if len(notYet) > 3 {
		notYet = append(notYet[:3], fmt.Sprintf("and %d more", len(notYet)-3))
	}
	m.lastStable = phases["stable"]
	seen := fmt.Sprintf("%d of %d engines exist; %s", len(claims), m.cfg.engines, summarize(phases))
	if len(notYet) > 0 {
		seen += "; not done: " + strings.Join(notYet, "; ")
	}
	return active, len(claims) == m.cfg.engines && len(notYet) == 0, seen, nil
}

func summarize(phases map[string]int) string {
	keys := make([]string, 0, len(phases))
	for k := range phases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := k
		if name == "" {
			name = "no phase yet"
		}
		parts = append(parts, fmt.Sprintf("%s=%d", name, phases[k]))
	}
	return strings.Join(parts, " ")
}

type engineState struct {
	phase         string
	active, drain int64
	engineReady   harness.Cond
	ready         harness.Cond
}

func readEngine(u *unstructured.Unstructured) engineState {
	i := func(f string) int64 { v, _, _ := unstructured.NestedInt64(u.Object, "status", f); return v }
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return engineState{
		phase: phase, active: i("activeGeneration"), drain: i("drainingGeneration"),
		engineReady: harness.Condition(u, "EngineReady"), ready: harness.Condition(u, "Ready"),
	}
}

func (e engineState) stable() bool {
	return e.phase == "stable" && e.drain == 0 && e.engineReady.Status == "True" && e.ready.Status == "True"
}

func (e engineState) String() string {
	return fmt.Sprintf("phase=%q active=%d draining=%d EngineReady=%s Ready=%s", e.phase, e.active, e.drain, e.engineReady, e.ready)
}

// running fails when a process of the stack died: no wait can succeed then.
func (m *meter) running() error {
	for _, p := range m.c.Processes() {
		if ok, err := p.Running(); !ok {
			return errors.Errorf("%s is not running (%v); end of %s:\n%s", p.Name, err, p.Log, p.LogTail(0, 30))
		}
	}
	return nil
}

// A snap is what the report subtracts: counters read at one time.
type snap struct {
	at         time.Time
	requests   scale.Counts
	own        scale.Counts
	workload   scale.Counts
	cpu        map[string]float64
	opens      float64
	breakerLog int
}

func (m *meter) snapshot(ctx context.Context) (*snap, error) {
	s := &snap{at: time.Now(), cpu: map[string]float64{}}
	// The harness's count first: a request it made before this read the
	// API server has counted too.
	s.own = m.own.Snapshot()
	m.workloadMu.Lock()
	s.workload = maps.Clone(m.workload)
	m.workloadMu.Unlock()
	b, err := m.c.Kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the API server's metrics")
	}
	if s.requests, err = scale.ParseRequests(bytes.NewReader(b)); err != nil {
		return nil, err
	}
	for _, name := range processes {
		p := m.c.Process(name)
		if p == nil {
			return nil, errors.Errorf("the stack has no process %s", name)
		}
		if s.cpu[name], err = cpu(p.Pid()); err != nil {
			return nil, errors.Wrapf(err, "cannot read the CPU time of %s", name)
		}
	}
	if s.cpu[harnessProcess], err = cpu(os.Getpid()); err != nil {
		return nil, errors.Wrap(err, "cannot read the harness's CPU time")
	}
	if s.opens, err = crossplaneCounter(ctx, breakerOpens); err != nil {
		return nil, err
	}
	n, read, err := countLines(m.c.Process("crossplane").Log, m.logRead, containing(breakerLogLine))
	if err != nil {
		return nil, errors.Wrap(err, "cannot read Crossplane's log")
	}
	m.breakerLog += n
	m.logRead = read
	s.breakerLog = m.breakerLog
	return s, nil
}

func cpu(pid int) (float64, error) {
	if pid <= 0 {
		return 0, errors.New("not running")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return scale.CPUSeconds(b)
}

func crossplaneCounter(ctx context.Context, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, crossplaneMetrics, nil)
	if err != nil {
		return 0, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, errors.Wrap(err, "cannot read Crossplane's metrics")
	}
	defer rsp.Body.Close() //nolint:errcheck // Read only.
	if rsp.StatusCode != http.StatusOK {
		return 0, errors.Errorf("Crossplane's metrics answered %s", rsp.Status)
	}
	return scale.SumCounter(io.LimitReader(rsp.Body, 64<<20), name)
}

// containing matches the lines holding s.
func containing(s string) func([]byte) bool {
	return func(line []byte) bool { return bytes.Contains(line, []byte(s)) }
}

// countLines counts the whole lines match accepts that a log gained since
// offset, and returns the offset after the last whole line: Crossplane's and
// the function's debug logs grow large, so each read takes only what is new.
func countLines(path string, offset int64, match func([]byte) bool) (int, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, offset, err
	}
	defer f.Close() //nolint:errcheck // Read only.
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, offset, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
			// A line longer than the buffer is read in pieces; the
			// messages matched are short and near the start of their
			// line.
			offset += int64(len(line))
			if match(line) {
				n++
			}
		case errors.Is(err, io.EOF):
			// A line still being written is read next time.
			return n, offset, nil
		default:
			return 0, offset, err
		}
	}
}

// phase is the difference of two snapshots.
func phase(name string, before, after *snap, settles bool) (scale.Phase, error) {
	req, err := scale.Sub(after.requests, before.requests)
	if err != nil {
		return scale.Phase{}, err
	}
	own, err := scale.Sub(after.own, before.own)
	if err != nil {
		return scale.Phase{}, err
	}
	workload, err := scale.Sub(after.workload, before.workload)
	if err != nil {
		return scale.Phase{}, err
	}
	own = own.Without(workload)
	cpu := map[string]float64{}
	for k, v := range after.cpu {
		cpu[k] = v - before.cpu[k]
	}
	return scale.Phase{
		Name: name, From: before.at, To: after.at, Took: after.at.Sub(before.at), Settles: settles,
		Requests: req.Without(own), Harness: own.Total(false), CPU: cpu,
		BreakerOpens: after.opens - before.opens, BreakerLogLines: after.breakerLog - before.breakerLog,
	}, nil
}
