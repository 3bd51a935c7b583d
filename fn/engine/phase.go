package engine

import (
	"fmt"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
)

// Requeue intervals. Progress never waits on a slow poll: a pass that
// moved the machine asks to be called again at once. Creating waits for
// pods, and Crossplane watches the StatefulSet it composes, so its
// readiness arrives as a watch event; the creating timer only backs up
// what has no watch, the StatefulSet's Warning events (a pod that cannot
// be created), so it is long: a short one would poll every engine that is
// creating for nothing.
const (
	ttlProgress = 1 * time.Second
	ttlCreating = 30 * time.Second
	ttlGated    = 10 * time.Second
	// ttlWatchesDropped caps every TTL while Crossplane's circuit breaker
	// drops this composite's watch events (for at least five minutes): the
	// timer is then the only way an edit is noticed. Timed calls do not
	// count against the breaker.
	//
	// This cap is also why a resting engine needs no shorter safety poll
	// after a burst of events. Crossplane v2.4 drops an event only while
	// the breaker is open; the event that opens it is still delivered, and
	// every call made while it is open sees Responsive False (the
	// reconciler sets it from the breaker before calling the function) and
	// so asks to be called again within this cap. The breaker closes only
	// on a later event, and the first call after that reads everything
	// afresh. So every dropped event is followed by a call.
	ttlWatchesDropped = composite.TTLWatchesDropped
	// breakerReprobe: while the breaker stays open, a resting engine
	// stamps lastReconciled again once it is this old, so that the write
	// closes the breaker (composite.LastReconciled).
	breakerReprobe = composite.BreakerReprobe
)

// terminalPhase is where a finished rollout rests: stopped for zero
// replicas, stable otherwise. Every transition into a terminal phase goes
// through here, so the distinction is made in one place.
func terminalPhase(spec v1alpha1.FireboltEngineSpec) v1alpha1.EnginePhase {
	if spec.Replicas == 0 {
		return v1alpha1.EnginePhaseStopped
	}
	return v1alpha1.EnginePhaseStable
}

// emitMode says which of a generation's objects a call returns.
type emitMode int

const (
	// emitAll returns every object, creating any that is missing.
	emitAll emitMode = iota + 1
	// emitExisting returns only objects that exist, so they survive
	// without anything new being created.
	emitExisting
)

// Compute is the compute layer: from the inputs, the live signals and the
// time, the plan of this call. It is pure: no I/O, no clock, no randomness.
func Compute(in Inputs, sig Signals, now time.Time) Plan {
	if in.Engine == "" || in.Namespace == "" {
		return frozen(in, now)
	}
	// Auto-stop decides first, from the phase before this call, and the
	// machine then composes its count exactly as it composes
	// spec.replicas: a change of count is a rollout like any other.
	as := decideAutoStop(in, sig, now)
	m := newMachine(in, sig)
	m.now = now
	m.autoStop = as
	m.in.Spec.Replicas = as.replicas
	m.step()
	return m.plan(now)
}

// machine holds one call's decision while it is being made.
type machine struct {
	in  Inputs
	sig Signals

	instance     instanceState
	classProblem string
	rejection    *rejection
	policy       Policy
	// gatedPhase: the phase this call runs in may render from the spec, so
	// it consults the instance and the class (stable, stopped, creating).
	gatedPhase bool

	next     v1alpha1.FireboltEngineStatus
	emit     map[int]emitMode
	recorded map[int]Recording
	route    int
	// abandoned is a generation returned one last time, without its
	// recording; -1 when none.
	abandoned int
	results   []Result
	ttl       time.Duration
	drainMsg  string
	// tlsHold says why the routing Service waits for the gateway (its
	// trust of a generation's CA, or its route during a protocol switch).
	tlsHold string
	// inEffect: the phase is terminal and the active generation is what
	// the composite's spec renders now; no other generation exists.
	inEffect bool
	// autoStop is auto-stop's decision; in.Spec.Replicas holds its count.
	autoStop autoStopCall
	// now is the time of the call.
	now time.Time
	// partition is the partition an in-place step renders; nil when the
	// recorded one stands.
	partition *partitionOf
	// moved is what the function remembers of an in-place step's move of
	// the partition (phased.Remember); nil when it made none.
	moved *phased.Recent
	// adoptionFailed says why the generation a migrated claim asks to
	// adopt cannot be; "" when none is asked or it can be.
	adoptionFailed string
}

func newMachine(in Inputs, sig Signals) *machine {
	m := &machine{
		in:        in,
		sig:       sig,
		instance:  evaluateInstance(in),
		policy:    effectivePolicy(in.Spec, in.classSpec()),
		emit:      map[int]emitMode{},
		recorded:  map[int]Recording{},
		route:     -1,
		abandoned: -1,
		next: v1alpha1.FireboltEngineStatus{
			ObservedGeneration: in.Status.ObservedGeneration,
			CurrentGeneration:  in.Status.CurrentGeneration,
			ActiveGeneration:   in.Status.ActiveGeneration,
			Phase:              in.Status.Phase,
		},
	}
	if d := in.Status.DrainingGeneration; d != nil {
		m.next.DrainingGeneration = ptrTo(*d)
	}
	// The last analysis stays, as the record of why the active generation
	// was switched to, until the next one starts (analysisPasses).
	if a := in.Status.Analysis; a != nil {
		c := *a
		m.next.Analysis = &c
	}
	if r := in.Status.PhasedRollout; r != nil {
		m.next.PhasedRollout = r.DeepCopy()
	}
	switch {
	case in.Class.Name == "":
	case !in.Class.Resolved:
		m.classProblem = fmt.Sprintf("waiting for Crossplane to fetch FireboltEngineClass %s/%s", in.Namespace, in.Class.Name)
	case !in.Class.Found:
		m.classProblem = fmt.Sprintf("FireboltEngineClass %s/%s not found: create it or change spec.engineClassRef", in.Namespace, in.Class.Name)
	case !in.Class.Published:
		// Never a default in its place: rendering without the class's
		// template would roll the engine twice.
		m.classProblem = fmt.Sprintf("waiting for FireboltEngineClass %s/%s to publish its spec (ConfigMap %s)",
			in.Namespace, in.Class.Name, contract.ClassSpecConfigMap(in.Class.Name))
	case in.Class.Err != "":
		m.classProblem = fmt.Sprintf("FireboltEngineClass %s/%s: %s", in.Namespace, in.Class.Name, in.Class.Err)
	}
	m.rejection = validate(in)
	if m.rejection == nil {
		m.rejection = uiSidecarRejection(in)
	}
	if m.rejection == nil {
		m.rejection = validateAutoStop(in)
	}
	return m
}

// canRender: everything a rendering needs is there and acceptable.
func (m *machine) canRender() bool {
	return m.instance.Ready && m.classProblem == "" && m.rejection == nil
}

// step runs the phase machine: one function decides every transition.
func (m *machine) step() {
	st := m.in.Status
	switch st.Phase {
	case "":
		m.gatedPhase = true
		if m.in.Adopt.Asked {
			m.adopt()
			return
		}
		m.initialize()
	case v1alpha1.EnginePhaseCreating:
		if m.nextCommitted(st.CurrentGeneration) {
			// A protocol switch was asked of the gateway and the status
			// write that said so was lost: it is completed.
			m.next.Phase = v1alpha1.EnginePhaseSwitching
			m.switching()
			return
		}
		m.gatedPhase = true
		m.creating()
	case v1alpha1.EnginePhaseSwitching:
		m.switching()
	case v1alpha1.EnginePhaseDraining:
		m.draining()
	case v1alpha1.EnginePhaseCleaning:
		m.cleaning()
	case v1alpha1.EnginePhaseUpdating:
		m.updating()
	default:
		// stable, stopped, and any phase this function does not know.
		// A terminal phase serves its current generation; without one
		// there is a generation to create.
		m.gatedPhase = true
		m.creatingOrStable()
	}
}

// initialize is the first call, as the original's: phase creating, no
// active generation. When everything a rendering needs is there, the
// current generation (0) is recorded in this same status write, as
// creating would record it on the next call: the objects still follow on
// the call after the record, and each call saved is a round of
// Crossplane's writes (issue 31). Crossplane calls the function a second
// time within a reconcile once it has fetched what the first call asked
// for, and keeps the last answer, so a first reconcile records.
func (m *machine) initialize() {
	m.next.Phase = v1alpha1.EnginePhaseCreating
	m.next.ActiveGeneration = -1
	m.next.DrainingGeneration = nil
	m.event("NewGeneration", fmt.Sprintf("Creating generation %d", m.next.CurrentGeneration))
	m.ttl = ttlProgress
	if n := m.next.CurrentGeneration; m.canRender() && !m.generationExists(n) {
		m.recorded[n] = m.render(n)
	}
}

// stable handles stable and stopped: re-apply the active generation exactly
// as recorded and detect drift. Drift writes only the intent: the bumped
// generation, phase creating and the new generation's rendering; its
// objects appear on the next call, after the status holds the rendering.
func (m *machine) stable() {
	n := m.in.Status.ActiveGeneration
	m.route = n
	if !m.canRender() {
		m.emit[n] = emitExisting
		m.ttl = min(m.in.Config.StableTTL, ttlGated)
		return
	}
	m.emit[n] = emitAll
	if rec, ok := m.in.Renderings[n]; ok && rec.usable() && rec.matches(renderedHash(m.renderInput(n))) {
		if m.unrolled(n, rec) {
			return
		}
		if m.renewed(n) {
			m.replace(n, " (cert-manager issued its certificate again, which its pods read only when they start)")
			return
		}
		m.next.Phase = terminalPhase(m.in.Spec)
		m.inEffect = m.onlyGeneration(n) && m.carriesRecording(n, rec)
		m.ttl = m.in.Config.StableTTL
		return
	}
	if rec, ok := m.in.Renderings[n]; ok && rec.usable() && m.inPlace(n, rec, m.render(n)) {
		return
	}
	m.replace(n, "")
}

// replace starts a new generation, recording its rendering, to replace the
// serving generation n.
func (m *machine) replace(n int, note string) {
	next := m.nextGeneration(n)
	m.next.CurrentGeneration = next
	m.next.Phase = v1alpha1.EnginePhaseCreating
	m.recorded[next] = m.render(next)
	m.event("NewGeneration", fmt.Sprintf("Creating generation %d to replace generation %d%s", next, n, note))
	m.ttl = ttlProgress
}

// creating ensures the current generation and waits for its pods. A spec
// change against a generation whose rendering is already recorded abandons
// it (its objects are left out, so Crossplane deletes them) and moves to the
// next number: a live StatefulSet is never patched in place, and a number
// is never reused while its old objects may still be terminating.
func (m *machine) creating() {
	n, a := m.in.Status.CurrentGeneration, m.in.Status.ActiveGeneration
	m.next.Phase = v1alpha1.EnginePhaseCreating
	if a >= 0 && a != n {
		m.emit[a] = emitAll
		m.route = a
	}
	if !m.canRender() {
		m.emit[n] = emitExisting
		m.ttl = ttlCreating
		return
	}
	rec, ok := m.in.Renderings[n]
	switch {
	case !ok || !rec.usable():
		if m.generationExists(n) {
			m.abandon(n, "its objects exist without a recorded rendering")
			return
		}
		// Record first; the objects follow on the next call.
		m.recorded[n] = m.render(n)
		m.ttl = ttlProgress
		return
	case !rec.matches(renderedHash(m.renderInput(n))):
		if a >= 0 && routedGeneration(m.in.Observed[RoutingServiceKey]) == n {
			// The Service already reached n (a call pointed it there and
			// its status write was lost), so n serves traffic: abandoning
			// it now would delete what the Service selects, and a failed
			// apply of the Service could leave it selecting nothing. Point
			// the Service back at a first (route is a); n is abandoned on
			// the call that observes it there.
			m.emit[n] = emitExisting
			m.ttl = ttlProgress
			return
		}
		m.abandon(n, "the spec changed")
		return
	}
	m.emit[n] = emitAll
	ready := m.pods(n).Ready
	if !m.analysisPasses(n, m.now) {
		if !ready {
			m.ttl = ttlCreating
		}
		return
	}
	if ready {
		if m.renewed(n) {
			// Its pods serve the certificate they started with, whose CA
			// the gate below cannot see (it reads the current issue), and
			// would be replaced for the renewal right after the switch.
			m.abandon(n, "cert-manager issued its certificate again, which its pods read only when they start")
			return
		}
		// The gateway must trust n's certificate before any query is
		// routed to it; it is told by the instance, a required object,
		// whose change calls the engine.
		if why := m.cutoverHeld(n); why != "" {
			m.tlsHold = why
			m.ttl = ttlGated
			return
		}
		m.next.Phase = v1alpha1.EnginePhaseSwitching
		m.ttl = ttlProgress
		if m.protocolSwitch(n) {
			// The engine now asks the gateway to reach n by the next
			// Service; switching moves the routing Service once it does.
			return
		}
		// Switching's first step, pointing the routing Service at n, is
		// taken in this same call: the pods it selects are ready now, and
		// the next call, in switching, finds the Service observed on n and
		// completes the switch. One call (and its requests) fewer per
		// rollout; the status still shows switching until the Service is
		// observed there.
		m.route = n
		return
	}
	m.ttl = ttlCreating
}

// abandon moves on to the next generation and records its rendering. Generation
// n's existing objects are still returned in this response, so they are
// only deleted once the status no longer references n: were they left out
// now, a crash before the status write could have the next call re-create
// a generation whose objects are still terminating.
func (m *machine) abandon(n int, why string) {
	m.emit[n] = emitExisting
	m.abandoned = n
	next := m.nextGeneration(n)
	m.next.CurrentGeneration = next
	m.recorded[next] = m.render(next)
	m.event("Abandoned", fmt.Sprintf("Abandoned generation %d before it served traffic: %s; creating generation %d", n, why, next))
	m.ttl = ttlProgress
}

// switching points the routing Service at the current generation, then,
// once the observed Service selects it, records it as active.
func (m *machine) switching() {
	n, a := m.in.Status.CurrentGeneration, m.in.Status.ActiveGeneration
	m.ttl = ttlProgress
	if a >= 0 && a != n {
		m.emit[a] = emitAll
	}
	if rec, ok := m.in.Renderings[n]; (!ok || !rec.usable()) && !m.generationExists(n) {
		// Nothing to switch to: the generation was never created.
		m.next.Phase = v1alpha1.EnginePhaseCreating
		if a >= 0 {
			m.route = a
		}
		return
	}
	m.emit[n] = emitAll
	if routedGeneration(m.in.Observed[RoutingServiceKey]) != n && m.protocolSwitch(n) {
		if why := m.nextHeld(n); why != "" {
			// The routing Service stays on a until every gateway pod
			// reaches n by the next Service in n's protocol.
			m.route = a
			m.tlsHold = why
			m.ttl = ttlGated
			return
		}
	}
	m.route = n
	if routedGeneration(m.in.Observed[RoutingServiceKey]) != n {
		return
	}
	m.next.ActiveGeneration = n
	if a >= 0 && a != n {
		m.next.DrainingGeneration = ptrTo(a)
		m.next.Phase = v1alpha1.EnginePhaseDraining
		m.event("Switched", fmt.Sprintf("Routing traffic to generation %d; draining generation %d", n, a))
		return
	}
	m.next.DrainingGeneration = nil
	m.next.Phase = terminalPhase(m.in.Spec)
	m.event("Switched", fmt.Sprintf("Routing traffic to generation %d", n))
}

// draining keeps the old generation until it has drained. The spec is not
// consulted: a change waits until the rollout is done.
func (m *machine) draining() {
	a := m.in.Status.ActiveGeneration
	m.emit[a] = emitAll
	m.route = a
	m.ttl = ttlProgress
	d := m.in.Status.DrainingGeneration
	if d == nil || *d == a {
		m.next.DrainingGeneration = nil
		m.next.Phase = terminalPhase(m.in.Spec)
		return
	}
	// An old generation is only ever kept, never re-created.
	m.emit[*d] = emitExisting

	why := ""
	switch {
	case m.in.Observed[resourceName(*d, suffixStatefulSet)] == nil:
		why = "its StatefulSet is gone"
	case m.policy.drainSkipped() != "":
		why = m.policy.drainSkipped()
	case m.sig.Drain != nil && m.sig.Drain.Drained:
		why = "no pod serves queries"
	}
	if why == "" {
		switch {
		case m.sig.Drain == nil:
			m.drainMsg = "the drain check did not run"
		case m.sig.Drain.Failing:
			m.drainMsg = m.sig.Drain.Message
		}
		m.ttl = m.policy.DrainCheckInterval
		return
	}
	m.next.Phase = v1alpha1.EnginePhaseCleaning
	m.event("Drained", fmt.Sprintf("Generation %d drained: %s", *d, why))
}

// cleaning leaves the drained generation out, so Crossplane deletes it, and
// ends the rollout.
func (m *machine) cleaning() {
	a := m.in.Status.ActiveGeneration
	m.emit[a] = emitAll
	m.route = a
	if d := m.in.Status.DrainingGeneration; d != nil && *d != a {
		m.event("Cleaned", fmt.Sprintf("Deleted generation %d", *d))
	}
	m.next.DrainingGeneration = nil
	m.next.Phase = terminalPhase(m.in.Spec)
	m.ttl = ttlProgress
}

// routing decides the generation the routing Service selects, and whether
// it is returned at all. Once observed it is always returned: Crossplane
// deletes what is left out, and users and the gateway reach the engine by
// it. A phase that routes (m.route) decides. Otherwise no generation is
// active (the first rollout, or every generation gone), and the original's
// order holds: the Service is created, or moved off a generation that is
// gone, only once the current generation's StatefulSet exists and the call
// is not gated; until then it is left as it is (keep), since after a lost
// or stale status write the pods it selects may be the ones serving. It
// has no ready endpoints until the current generation's pods are ready,
// and switching moves it.
func (m *machine) routing() (gen int, keep, ok bool) {
	if m.route >= 0 {
		return m.route, false, true
	}
	n := m.next.CurrentGeneration
	started := m.emit[n] == emitAll && m.in.Observed[resourceName(n, suffixStatefulSet)] != nil
	obs := m.in.Observed[RoutingServiceKey]
	switch g := routedGeneration(obs); {
	case obs == nil:
		return n, false, m.next.ActiveGeneration < 0 && started && m.trusted(n)
	case g >= 0 && (g == n || m.generationExists(g)):
		return g, false, true
	case started && m.trusted(n):
		return n, false, true
	}
	return -1, true, true
}

// render renders generation gen from the current spec. Only called when
// canRender.
func (m *machine) render(gen int) Recording {
	return record(gen, renderGeneration(m.renderInput(gen)))
}

// renderInput is what generation gen renders from.
func (m *machine) renderInput(gen int) renderInput {
	return renderInput{
		Engine:           m.in.Engine,
		Namespace:        m.in.Namespace,
		Gen:              gen,
		Spec:             m.in.Spec,
		Class:            m.in.classSpec(),
		InstanceID:       m.instance.ID,
		MetadataEndpoint: m.instance.MetadataEndpoint,
		CustomConfig:     effectiveCustomConfig(m.in.Spec, m.in.classSpec()),
		Images:           m.in.Config.Images,
		Phased:           m.policy.Rollout == v1alpha1.RolloutPhased,
		Auth:             m.instance.Auth,
		TLS:              m.instance.TLS,
	}
}

// generationExists reports whether any object of generation gen is
// observed.
func (m *machine) generationExists(gen int) bool {
	for _, s := range generationSuffixes {
		if m.in.Observed[resourceName(gen, s)] != nil {
			return true
		}
	}
	return false
}

// onlyGeneration reports whether no object of a generation other than gen
// is observed: an older generation Crossplane has not deleted yet still
// serves the previous spec.
func (m *machine) onlyGeneration(gen int) bool {
	for name := range m.in.Observed {
		if g, _, ok := parseResourceName(name); ok && g != gen {
			return false
		}
	}
	return true
}

// pods is generation gen's pod state, against the replica count its
// StatefulSet was rendered with. For the current generation that is the
// spec's: its objects are only returned while its rendering matches the
// spec, which is why drift is checked before readiness.
func (m *machine) pods(gen int) podsState { return podsOf(m.in, gen) }

// podsOf is pods for in, for the read layer too.
func podsOf(in Inputs, gen int) podsState {
	desired := int64(in.Spec.Replicas)
	if rec, ok := in.Renderings[gen]; ok && rec.usable() {
		desired = number(rec.Objects.StatefulSet, "spec", "replicas")
	} else if obs := in.Observed[resourceName(gen, suffixStatefulSet)]; obs != nil {
		desired = obs.number("spec", "replicas")
	}
	return statefulSetPods(in.Observed[resourceName(gen, suffixStatefulSet)], desired)
}

// event records a Normal result: a transition worth telling the user about.
// Trouble is reported through conditions and the recording check instead.
func (m *machine) event(reason, msg string) {
	m.results = append(m.results, Result{Severity: SeverityNormal, Reason: reason, Message: BoundMessage(msg)})
}

func ptrTo[T any](v T) *T { return &v }
