package engine

import (
	"bytes"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/fn/instancestate"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
)

// A Plan is everything one call decides, ready to be written into the
// response: Compute's only output.
type Plan struct {
	// Status is the composite's complete next status. Crossplane applies
	// the desired composite status with server-side apply, so a field left
	// out would be deleted.
	Status v1alpha1.FireboltEngineStatus

	// Resources are the desired composed resources by
	// composition-resource-name. An observed resource missing here is
	// deleted by Crossplane.
	Resources map[resource.Name]DesiredObject

	// Ready is the composite's readiness: EngineReady is True.
	Ready bool

	Conditions []Condition

	// Results become events; only transitions produce them.
	Results []Result

	// TTL is when Crossplane should call again.
	TTL time.Duration

	// Requirements are the resources the next call needs, by name.
	Requirements map[string]Requirement

	// AutoStopDecided is the reason of the decision auto-stop made on this
	// call; "" when it made none (disabled, or a rollout under way).
	AutoStopDecided autostop.Reason

	// Moved is what the function remembers of an in-place step's move of
	// the partition; nil when it made none.
	Moved *phased.Recent
}

// The shapes every composer shares.
type (
	// DesiredObject is one desired composed resource.
	DesiredObject = composite.Desired
	// Condition is a custom condition for the composite and its claim.
	Condition = composite.Condition
	// Severity of a Result.
	Severity = composite.Severity
	// Result is an event on the composite and its claim.
	Result = composite.Result
)

// Result severities.
const (
	SeverityNormal  = composite.SeverityNormal
	SeverityWarning = composite.SeverityWarning
)

// Requirement asks Crossplane for one object by name.
type Requirement struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
}

// plan assembles the call's Plan from the decision.
func (m *machine) plan(now time.Time) Plan {
	p := Plan{
		Resources:    map[resource.Name]DesiredObject{},
		Results:      m.results,
		TTL:          m.ttl,
		Requirements: requirements(m.in),
	}

	keep := map[int]Recording{}
	unrecorded := false
	for gen, mode := range m.emit {
		rec, hasRec := m.in.Renderings[gen]
		hasRec = hasRec && rec.usable()
		if hasRec && gen != m.abandoned {
			keep[gen] = rec
		}
		var structs *generationStructs
		if hasRec {
			structs = recordedStructs(m.in.Engine, m.in.Namespace, m.in.Config.PodSecurity, rec)
		}
		for _, s := range generationSuffixes {
			name := resourceName(gen, s)
			obs := m.in.Observed[name]
			if mode == emitExisting && obs == nil {
				continue
			}
			switch {
			case hasRec:
				p.Resources[name] = rec.desired(structs, s, m.objectReady(gen, s))
			case obs != nil:
				p.Resources[name] = DesiredObject{Object: composite.Unchanged(obs.UnstructuredContent()), Ready: m.objectReady(gen, s)}
				unrecorded = true
			}
		}
	}
	for gen, rec := range m.recorded {
		keep[gen] = rec.encoded()
	}
	p.Moved = m.moved
	if pt := m.partition; pt != nil {
		name := resourceName(pt.gen, suffixStatefulSet)
		if d, ok := p.Resources[name]; ok {
			p.Resources[name] = withPartition(d, pt.value)
		}
	}
	m.emitCertificates(&p)
	// Decided before the routing Service, which publishes it.
	m.next.ObservedAuthHash = m.observedAuthHash()
	m.recordServingTLS()
	m.emitRouting(&p)
	if name, b, ok := classBinding(m.in); ok {
		p.Resources[name] = b
	}

	m.next.Renderings = statusRenderings(keep)
	m.next.ObservedGeneration = claimgen.Observed(m.in.Status.ObservedGeneration, m.in.Claim, m.inEffect)
	m.next.AutoStop = m.autoStop.status
	m.dropStaleRecords()
	if m.autoStop.decided && m.autoStop.status != nil {
		p.AutoStopDecided = autostop.Reason(m.autoStop.status.Reason)
	}
	if m.autoStop.ttl > 0 {
		p.TTL = min(p.TTL, m.autoStop.ttl)
	}
	if m.autoStop.scaled {
		p.Results = append(p.Results, Result{Severity: SeverityNormal, Reason: "AutoStop",
			Message: BoundMessage(fmt.Sprintf("auto-stop scales the engine to %d replica(s): %s", m.autoStop.replicas, autoStopWhy(m.autoStop)))})
	}
	p.Status = withLastReconciled(m.in.Status, m.next, m.in.Breaker, now)

	ready := engineReady(m.readyFacts())
	p.Conditions, p.Results = m.conditions(ready, unrecorded, p.Results)
	p.Ready = ready.Status == metav1.ConditionTrue
	if m.in.Breaker.Open {
		p.TTL = min(p.TTL, ttlWatchesDropped)
	}
	return p
}

// emitRouting adds the routing Service, publishing what the engine tells
// its instance, and the next Service while it is needed.
func (m *machine) emitRouting(p *Plan) {
	if gen, keep, ok := m.routing(); ok {
		obs := m.in.Observed[RoutingServiceKey]
		if keep {
			gen = routedGeneration(obs)
		}
		route, published := m.gatewayRoute(gen)
		m.emitNextService(p, route)
		r := Routing{Engine: m.in.Engine, Namespace: m.in.Namespace, Gen: gen, Instance: m.in.Spec.InstanceRef,
			ObservedAuthHash: m.next.ObservedAuthHash, GatewayRoute: published}
		if keep {
			p.Resources[RoutingServiceKey] = DesiredObject{Object: keptRoutingService(obs.UnstructuredContent(), r), Ready: true}
		} else {
			p.Resources[RoutingServiceKey] = routingServiceDesired(r)
		}
	}
}

// dropStaleRecords clears the status records that describe nothing any
// more: the analysis without spec.analysis, and the last in-place update
// without the policy or once another generation serves.
func (m *machine) dropStaleRecords() {
	if m.in.Spec.Analysis == nil {
		m.next.Analysis = nil
	}
	if (m.policy.Rollout != v1alpha1.RolloutPhased && m.next.Phase != v1alpha1.EnginePhaseUpdating) ||
		m.next.ActiveGeneration != m.in.Status.ActiveGeneration {
		m.next.PhasedRollout = nil
	}
}

// conditions are the engine's conditions after this call, ready first; a
// newly rejected recording adds a Warning to results.
func (m *machine) conditions(ready Condition, unrecorded bool, results []Result) ([]Condition, []Result) {
	cs := []Condition{ready, instanceReady(m.instance)}
	if c, ok := autoStopCondition(m.autoStop); ok {
		cs = append(cs, c)
	}
	if c, ok := analysisCondition(m.in, m.next.Analysis); ok {
		cs = append(cs, c)
	}
	if c, ok := phasedCondition(m.next.PhasedRollout, m.next.Phase); ok {
		cs = append(cs, c)
	}
	if c, ok := renderingsVerified(m.in, unrecorded); ok {
		cs = append(cs, c)
		if c.Reason == ReasonRecordingRejected && c.Message != valueOf(m.in.RenderingsVerified).Message {
			results = append(results, Result{Severity: SeverityWarning, Reason: ReasonRecordingRejected, Message: c.Message})
		}
	}
	return cs, results
}

// renderingsVerified is the RenderingsVerified condition: False while a
// rejected recording is in effect, that is on the call that rejects it and
// for as long as a generation is still reproduced from its observed objects
// (the rejected recording itself leaves the status at once). It is reported
// True again afterwards, and not at all by an engine that never had a
// recording rejected.
func renderingsVerified(in Inputs, unrecorded bool) (Condition, bool) {
	if msg := rejectedRecordings(in.Renderings); msg != "" {
		return Condition{Type: TypeRenderingsVerified, Status: metav1.ConditionFalse, Reason: ReasonRecordingRejected, Message: msg}, true
	}
	prev := in.RenderingsVerified
	if prev == nil {
		return Condition{}, false
	}
	if prev.Status == metav1.ConditionFalse && prev.Reason == ReasonRecordingRejected && unrecorded {
		return Condition{Type: TypeRenderingsVerified, Status: metav1.ConditionFalse, Reason: ReasonRecordingRejected,
			Message: BoundMessage(prev.Message)}, true
	}
	return Condition{Type: TypeRenderingsVerified, Status: metav1.ConditionTrue, Reason: ReasonRenderingsVerified,
		Message: "every generation is reproduced from a verified recording"}, true
}

func valueOf[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (m *machine) objectReady(gen int, suffix string) bool {
	if suffix == suffixStatefulSet {
		return m.pods(gen).Ready
	}
	// A ConfigMap or a Service is ready once Crossplane has applied it,
	// which it does in the call that returns it. Reported not ready until
	// observed, each would cost an event ("Composed resource ... is not yet
	// ready") in the call that creates it, and change nothing else: the
	// composite's readiness is the function's own (Plan.Ready).
	return true
}

func (m *machine) readyFacts() readyFacts {
	f := readyFacts{
		Phase:          m.next.Phase,
		Initializing:   m.in.Status.Phase == "",
		Gated:          m.gatedPhase,
		Instance:       m.instance,
		ClassProblem:   m.classProblem,
		Rejection:      m.rejection,
		DrainFailing:   m.drainMsg,
		GatewayHold:    m.tlsHold,
		AdoptionFailed: m.adoptionFailed,
		Current:        m.next.CurrentGeneration,
		Active:         m.next.ActiveGeneration,
	}
	if m.autoStop.enabled && m.in.Spec.Replicas == 0 && m.autoStop.status != nil {
		f.AutoStopped = m.autoStop.status.Reason
	}
	if d := m.in.Status.DrainingGeneration; d != nil {
		f.DrainingGen = *d
	}
	if f.Active >= 0 {
		f.ActivePods = m.pods(f.Active)
	}
	if _, stuck := dueWarningLookup(m.in); stuck && m.sig.Warning != nil {
		f.Warning = m.sig.Warning
	}
	return f
}

// withLastReconciled is next with lastReconciled stamped when the status
// changes, or to reprobe an open breaker, and kept otherwise
// (composite.LastReconciled).
func withLastReconciled(prev, next v1alpha1.FireboltEngineStatus, b composite.Breaker, now time.Time) v1alpha1.FireboltEngineStatus {
	next.LastReconciled = composite.LastReconciled(prev.LastReconciled, !sameStatus(prev, next), b, now)
	return next
}

// sameStatus compares statuses as they are written, ignoring
// lastReconciled. Deeply equal statuses are written the same, and that is
// the common case (an engine at rest), so only others are encoded: the
// encodings tell apart what the values do not (nil from empty under
// omitempty), and encoding the recorded renderings was most of the cost.
func sameStatus(a, b v1alpha1.FireboltEngineStatus) bool {
	a.LastReconciled, b.LastReconciled = nil, nil
	a.Renderings = statusRenderings(decodeRecordingsKeepEncoded(a.Renderings))
	if reflect.DeepEqual(a, b) {
		return true
	}
	ja, doneA, errA := marshalScratch(a)
	defer doneA()
	jb, doneB, errB := marshalScratch(b)
	defer doneB()
	// A status that cannot be encoded is never the same: writing it is what
	// surfaces the encoding error.
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// decodeRecordingsKeepEncoded indexes renderings without decoding them, to
// normalise their order.
func decodeRecordingsKeepEncoded(rs []v1alpha1.GenerationRendering) map[int]Recording {
	out := make(map[int]Recording, len(rs))
	for _, r := range rs {
		out[r.Generation] = Recording{Generation: r.Generation, Hash: r.Hash, AdoptedHash: r.AdoptedHash, Encoded: r.Objects}
	}
	return out
}

// frozen is the plan for a composite without claim labels: the function
// cannot name or place anything, so it keeps whatever exists exactly as it
// is and says why. Without the engine's name no recording can be verified,
// so the objects are the observed ones and the status, recordings
// included, is kept unchanged for when the labels are back.
func frozen(in Inputs, now time.Time) Plan {
	p := Plan{Resources: composite.KeepObserved(in.Observed), TTL: in.Config.StableTTL}
	// Its TTL is not capped while the breaker is open, so there is no poll
	// for a reprobe to end.
	p.Status = withLastReconciled(in.Status, in.Status, composite.Breaker{}, now)
	p.Conditions = []Condition{composite.ClaimLabelsMissing(TypeEngineReady, in.Composite.Name, "engines", v1alpha1.FireboltEngineKind)}
	return p
}

// claimNeeded tells whether a call in phase needs the engine's own claim.
// Only a call that may find the spec in effect publishes the claim's
// generation; during a rollout the published one is kept, or lowered when
// Crossplane still hands the claim in from an earlier call (the call that
// started the rollout already lowered it below the claim's). A
// required resource is watched, and Crossplane writes the claim's status
// after every status write of the composite, so requiring the claim during
// a rollout would double the watch events each step costs against
// Crossplane's circuit breaker.
func claimNeeded(phase v1alpha1.EnginePhase) bool {
	switch phase {
	case v1alpha1.EnginePhaseCreating, v1alpha1.EnginePhaseSwitching, v1alpha1.EnginePhaseDraining, v1alpha1.EnginePhaseCleaning,
		v1alpha1.EnginePhaseUpdating:
		return false
	default:
		return true
	}
}

// requirements asks for the engine's own claim (for its generation) when
// the phase needs it, the instance, the admin password's Secret while the
// instance enables auth and, when referenced, the ConfigMap
// publishing the class's spec, with the class claim only while that
// ConfigMap is missing: all in the claim's namespace. Only called with
// claim labels.
func requirements(in Inputs) map[string]Requirement {
	apiVersion := v1alpha1.SchemeGroupVersion.String()
	r := map[string]Requirement{}
	if claimNeeded(in.Status.Phase) {
		r[claimgen.Requirement] = Requirement{APIVersion: apiVersion, Kind: v1alpha1.FireboltEngineKind, Name: in.Engine, Namespace: in.Namespace}
	}
	if in.Spec.InstanceRef != "" {
		r[RequirementInstanceState] = Requirement{APIVersion: "v1", Kind: kindConfigMap, Name: instancestate.ConfigMapName(in.Spec.InstanceRef), Namespace: in.Namespace}
		if in.Instance.StateResolved && !in.Instance.Published {
			r[RequirementInstance] = Requirement{APIVersion: apiVersion, Kind: v1alpha1.FireboltInstanceKind, Name: in.Spec.InstanceRef, Namespace: in.Namespace}
		}
	}
	if pw, ok := adminPassword(in.Instance); ok && validSecretKey(pw) == "" {
		r[RequirementAdminSecret] = Requirement{APIVersion: "v1", Kind: "Secret", Name: pw.Name, Namespace: in.Namespace}
	}
	servingCertRequirement(in, r)
	adoptRequirements(in, r)
	if name, _, ok := rolledPodName(in); ok {
		r[RequirementRolledPod] = Requirement{APIVersion: "v1", Kind: "Pod", Name: name, Namespace: in.Namespace}
	}
	if a := in.Spec.Analysis; a != nil && a.Query.SecretRef != "" {
		r[RequirementAnalysisSecret] = Requirement{APIVersion: "v1", Kind: "Secret", Name: a.Query.SecretRef, Namespace: in.Namespace}
	}
	if in.Class.Name != "" {
		r[RequirementClassSpec] = Requirement{APIVersion: "v1", Kind: kindConfigMap, Name: contract.ClassSpecConfigMap(in.Class.Name), Namespace: in.Namespace}
		if in.Class.SpecResolved && !in.Class.Published {
			r[RequirementClass] = Requirement{APIVersion: apiVersion, Kind: v1alpha1.FireboltEngineClassKind, Name: in.Class.Name, Namespace: in.Namespace}
		}
	}
	return r
}

// autoStopWhy is the decision's reason, and its message when it has one.
func autoStopWhy(c autoStopCall) string {
	why := ""
	if c.status != nil {
		why = c.status.Reason
	}
	if c.message != "" {
		why += ": " + c.message
	}
	return why
}
