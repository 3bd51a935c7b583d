package kubectlfirebolt

import (
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// labelGeneration is the label the function puts on every object of an
// engine generation, its pods included (fn/engine.LabelGeneration).
const labelGeneration = "firebolt.io/generation"

// The engine conditions status reads beside Crossplane's Ready.
const (
	typeEngineReady       = "EngineReady"
	reasonDrainCheckFails = "DrainCheckFailing"
)

// maxPodsListed bounds the pods engine status reads: three generations at
// the replica limit.
const maxPodsListed = 3 * v1alpha1.MaxEngineReplicas

// maxNotReadyNamed bounds the not-ready pods named per generation.
const maxNotReadyNamed = 5

// EngineReport is what engine status says about an engine; -o json and
// -o yaml print it as is.
type EngineReport struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Instance  string `json:"instance"`
	Class     string `json:"class,omitempty"`
	Phase     string `json:"phase"`
	// SpecGeneration is the claim's metadata.generation, ObservedGeneration
	// the one fully in effect.
	SpecGeneration     int64 `json:"specGeneration"`
	ObservedGeneration int64 `json:"observedGeneration"`
	Replicas           int32 `json:"replicas"`
	// EffectiveReplicas is what auto-stop runs the engine at.
	EffectiveReplicas  *int32             `json:"effectiveReplicas,omitempty"`
	CurrentGeneration  int                `json:"currentGeneration"`
	ActiveGeneration   int                `json:"activeGeneration"`
	DrainingGeneration *int               `json:"drainingGeneration,omitempty"`
	Generations        []GenerationPods   `json:"generations"`
	Drain              *DrainReport       `json:"drain,omitempty"`
	AutoStop           *AutoStopReport    `json:"autoStop,omitempty"`
	WakeRequested      string             `json:"wakeRequested,omitempty"`
	PhasedRollout      *PhasedRolloutStep `json:"phasedRollout,omitempty"`
	Analysis           *AnalysisReport    `json:"analysis,omitempty"`
	Conditions         []ConditionReport  `json:"conditions"`
}

// GenerationPods is one generation's pods.
type GenerationPods struct {
	Generation int `json:"generation"`
	// Roles: current (the latest allocated), active (serving traffic),
	// draining; none for a generation status no longer names.
	Roles []string `json:"roles"`
	// Desired is its StatefulSet's spec.replicas; nil without one.
	Desired *int32 `json:"desired,omitempty"`
	Pods    int    `json:"pods"`
	Ready   int    `json:"ready"`
	// NotReady names pods that are not Ready, a few at most.
	NotReady []string `json:"notReady,omitempty"`
}

// DrainReport is where the drain of the old generation stands.
type DrainReport struct {
	Generation int `json:"generation"`
	// Verdict is the function's, as the claim shows it: waiting (pods
	// still serve queries, or no check has run yet), failing (the check
	// cannot read the pods: DrainCheckFailing) or drained (cleaning up).
	Verdict string `json:"verdict"`
	Message string `json:"message,omitempty"`
	// Live is this command's own check of the draining pods, through the
	// API server as the function checks them; nil when none ran.
	Live *LiveDrain `json:"live,omitempty"`
}

// LiveDrain is a drain check run now.
type LiveDrain struct {
	// Verdict: drained, busy or failing.
	Verdict string       `json:"verdict"`
	Message string       `json:"message,omitempty"`
	Pods    []PodQueries `json:"pods,omitempty"`
}

// PodQueries is one pod's queries.
type PodQueries struct {
	Pod       string  `json:"pod"`
	Running   float64 `json:"running"`
	Suspended float64 `json:"suspended"`
	Error     string  `json:"error,omitempty"`
}

// AutoStopReport is auto-stop's last decision (status.autoStop).
type AutoStopReport struct {
	Reason           string `json:"reason"`
	Replicas         *int32 `json:"replicas,omitempty"`
	LastActivityTime string `json:"lastActivityTime,omitempty"`
	LastScaledAt     string `json:"lastScaledAt,omitempty"`
}

// PhasedRolloutStep is where an in-place update stands
// (status.phasedRollout).
type PhasedRolloutStep struct {
	Phase          string `json:"phase"`
	UpdateRevision string `json:"updateRevision,omitempty"`
	// Step is the current step; nil when no pod is rolling.
	Step *v1alpha1.RollingPodStatus `json:"step,omitempty"`
}

// AnalysisReport is the check of a new generation before the switch
// (status.analysis).
type AnalysisReport struct {
	Generation                  int32  `json:"generation"`
	Status                      string `json:"status,omitempty"`
	Passed                      bool   `json:"passed"`
	ConsecutiveSuccessfulChecks int32  `json:"consecutiveSuccessfulChecks"`
	ConsecutiveFailedChecks     int32  `json:"consecutiveFailedChecks"`
	LastCheckMessage            string `json:"lastCheckMessage,omitempty"`
}

// ConditionReport is one condition, with what its reason means and what
// to do next from the troubleshooting catalogue (fn/reasons) when it is
// not True.
type ConditionReport struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Meaning string `json:"meaning,omitempty"`
	Action  string `json:"action,omitempty"`
}

type engineStatusCmd struct {
	Name string `arg:"" help:"The engine."`
}

// Run prints the engine's report.
func (cmd engineStatusCmd) Run(e *Env) error {
	c, err := e.begin("engine status", outTable, outJSON, outYAML)
	if err != nil {
		return err
	}
	eng, err := e.engine(c, cmd.Name)
	if err != nil {
		return err
	}
	r, err := buildReport(e, c, eng)
	if err != nil {
		return err
	}
	if e.Globals.Output == outJSON || e.Globals.Output == outYAML {
		return writeStructured(e.Out, e.Globals.Output, r)
	}
	return r.write(e.Out)
}

// buildReport reads what the claim's status does not hold (pods per
// generation, a live drain check) and puts it beside what it does.
func buildReport(e *Env, c Clients, eng engineClaim) (EngineReport, error) {
	st := eng.Status
	r := EngineReport{
		Name:               eng.Metadata.Name,
		Namespace:          eng.Metadata.Namespace,
		Instance:           eng.Spec.InstanceRef,
		Phase:              string(st.Phase),
		SpecGeneration:     eng.Metadata.Generation,
		ObservedGeneration: st.ObservedGeneration,
		Replicas:           eng.Spec.Replicas,
		CurrentGeneration:  st.CurrentGeneration,
		ActiveGeneration:   st.ActiveGeneration,
		DrainingGeneration: st.DrainingGeneration,
		WakeRequested:      eng.Metadata.Annotations[autostop.WakeAnnotation],
		Conditions:         conditionReports(st.Conditions),
	}
	if eng.Spec.EngineClassRef != nil {
		r.Class = *eng.Spec.EngineClassRef
	}
	if as := st.AutoStop; as != nil {
		r.EffectiveReplicas = as.Replicas
		r.AutoStop = &AutoStopReport{Reason: as.Reason, Replicas: as.Replicas, LastActivityTime: timeString(as.LastActivityTime), LastScaledAt: timeString(as.LastScaledAt)}
	}
	if p := st.PhasedRollout; p != nil {
		r.PhasedRollout = &PhasedRolloutStep{Phase: string(p.Phase), UpdateRevision: p.UpdateRevision, Step: p.RollingPodStatus}
	}
	if a := st.Analysis; a != nil {
		r.Analysis = &AnalysisReport{Generation: a.Generation, Status: string(a.Status), Passed: a.Passed,
			ConsecutiveSuccessfulChecks: a.ConsecutiveSuccessfulChecks, ConsecutiveFailedChecks: a.ConsecutiveFailedChecks, LastCheckMessage: a.LastCheckMessage}
	}
	gens, err := generationPods(e, c, eng)
	if err != nil {
		return r, err
	}
	r.Generations = gens
	r.Drain = drainReport(e, c, eng)
	return r, nil
}

func timeString(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// conditionReports are the claim's conditions, each not True with what
// the catalogue says of its reason.
func conditionReports(cs conditions) []ConditionReport {
	out := make([]ConditionReport, 0, len(cs))
	for _, c := range cs {
		cr := ConditionReport{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
		if c.Status != string(metav1.ConditionTrue) {
			if entry, ok := lookupReason(c.Type, c.Reason); ok {
				cr.Meaning, cr.Action = entry.Meaning, entry.Action
			}
		}
		out = append(out, cr)
	}
	return out
}

// generationPods counts the engine's pods per generation, by the labels
// the function puts on them, against each generation's StatefulSet.
func generationPods(e *Env, c Clients, eng engineClaim) ([]GenerationPods, error) {
	name := eng.Metadata.Name
	pods, err := c.Core.ListPods(e.Ctx, c.Namespace, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{contract.LabelEngine: name}).String(),
		Limit:         maxPodsListed,
	})
	if err != nil {
		return nil, errors.Wrapf(err, "cannot list the pods of fireboltengine %q", name)
	}
	byGen := map[int]*GenerationPods{}
	var order []int
	gen := func(g int) *GenerationPods {
		if byGen[g] == nil {
			byGen[g] = &GenerationPods{Generation: g, Roles: []string{}}
			order = append(order, g)
		}
		return byGen[g]
	}
	st := eng.Status
	if st.Phase != "" {
		gen(st.CurrentGeneration).Roles = append(gen(st.CurrentGeneration).Roles, "current")
	}
	if st.ActiveGeneration >= 0 && st.Phase != "" {
		gen(st.ActiveGeneration).Roles = append(gen(st.ActiveGeneration).Roles, "active")
	}
	if d := st.DrainingGeneration; d != nil {
		gen(*d).Roles = append(gen(*d).Roles, "draining")
	}
	items := pods.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	for i := range items {
		p := &items[i]
		g, err := strconv.Atoi(p.Labels[labelGeneration])
		if err != nil {
			continue
		}
		gp := gen(g)
		gp.Pods++
		if podReady(p) {
			gp.Ready++
		} else if len(gp.NotReady) < maxNotReadyNamed {
			gp.NotReady = append(gp.NotReady, p.Name)
		}
	}
	out := make([]GenerationPods, 0, len(order))
	for _, g := range order {
		gp := byGen[g]
		sts, err := c.Core.GetStatefulSet(e.Ctx, c.Namespace, fmt.Sprintf("%s-g%d", name, g))
		switch {
		case err == nil:
			gp.Desired = sts.Spec.Replicas
		case !kerrors.IsNotFound(err):
			return nil, errors.Wrapf(err, "cannot get the StatefulSet of generation %d", g)
		}
		out = append(out, *gp)
	}
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// drainReport is the function's drain verdict as the claim shows it, and a
// live check of the draining pods beside it; nil when nothing drains.
func drainReport(e *Env, c Clients, eng engineClaim) *DrainReport {
	st := eng.Status
	if st.DrainingGeneration == nil {
		return nil
	}
	d := &DrainReport{Generation: *st.DrainingGeneration}
	ready, _ := st.Conditions.get(typeEngineReady)
	switch {
	case st.Phase == v1alpha1.EnginePhaseCleaning:
		d.Verdict, d.Message = "drained", "being deleted"
	case ready.Reason == reasonDrainCheckFails:
		d.Verdict, d.Message = "failing", ready.Message
	default:
		d.Verdict = "waiting"
		d.Message = "kept until none of its pods serves a query (firebolt_running_queries + firebolt_suspended_queries = 0 on every pod)"
	}
	if st.Phase == v1alpha1.EnginePhaseDraining && c.Scraper != nil {
		sel := labels.SelectorFromSet(labels.Set{contract.LabelEngine: eng.Metadata.Name, labelGeneration: strconv.Itoa(d.Generation)})
		d.Live = liveDrain(c.Scraper.Observe(e.Ctx, c.Namespace, sel))
	}
	return d
}

func liveDrain(o scrape.Observation) *LiveDrain {
	v := scrape.Decide(o)
	l := &LiveDrain{Message: v.Message}
	switch {
	case v.Drained:
		l.Verdict = "drained"
	case v.Failing:
		l.Verdict = "failing"
	default:
		l.Verdict = "busy"
	}
	for _, p := range o.Pods {
		q := PodQueries{Pod: p.Pod, Running: p.Running, Suspended: p.Suspended}
		if p.Err != nil {
			q.Error = p.Err.Error()
		}
		l.Pods = append(l.Pods, q)
	}
	return l
}
