package engine

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// Signals are the live observations Compute needs beyond the request,
// gathered by the read layer only when the phase needs them.
type Signals struct {
	// Drain is the draining generation's drain verdict; nil when no drain
	// check was due.
	Drain *scrape.Verdict
	// Warning is the current StatefulSet's most recent Warning event; nil
	// when none was looked up or found.
	Warning *StatefulSetWarning
	// Activity is auto-stop's sample of the active generation; NotSampled
	// when none was due.
	Activity autostop.Sample
	// Analysis is the outcome of spec.analysis's check; nil when none was
	// due.
	Analysis *promcheck.Outcome
	// StepCheck is the outcome of the check an in-place step asked for;
	// nil when none was due.
	StepCheck *promcheck.Outcome
	// StepDrain is the drain verdict of the pod an in-place step is about
	// to let go; nil when none was due.
	StepDrain *podDrain
	// Recent is the function's last move of the in-place step's partition,
	// from its memory (phased.Memory); nil when it has none.
	Recent *phased.Recent
}

// A DrainProber scrapes the engine pods a selector names: Drain decides
// whether they have drained, Activity is what auto-stop samples. Options
// carry the scrape mode and bounds of this call.
type DrainProber interface {
	Drain(ctx context.Context, namespace string, selector labels.Selector, o scrape.Options) scrape.Verdict
	Activity(ctx context.Context, namespace string, selector labels.Selector, o scrape.Options) scrape.Observation
}

// EventLister lists the Warning events recorded for an object.
type EventLister interface {
	Warnings(ctx context.Context, namespace string, uid types.UID) ([]corev1.Event, error)
}

// drainCheck is a due drain check.
type drainCheck struct {
	Namespace string
	Selector  labels.Selector
	Options   scrape.Options
}

// dueDrainCheck says whether this call needs a drain verdict: only while
// draining a generation whose StatefulSet still exists, under a graceful,
// drain-checked rollout. Compute relies on the same function, so a verdict
// is never missing when it matters.
func dueDrainCheck(in Inputs) (drainCheck, bool) {
	if in.Status.Phase != v1alpha1.EnginePhaseDraining || in.Status.DrainingGeneration == nil || in.Namespace == "" {
		return drainCheck{}, false
	}
	dr := *in.Status.DrainingGeneration
	if dr == in.Status.ActiveGeneration {
		return drainCheck{}, false
	}
	if !effectivePolicy(in.Spec, in.classSpec()).drainChecked() {
		return drainCheck{}, false
	}
	if in.Observed[resourceName(dr, suffixStatefulSet)] == nil {
		return drainCheck{}, false
	}
	return generationScrape(in, dr), true
}

// generationScrape is a scrape of generation gen's pods with the function
// input's bounds and the instance's scrape mode: drain checks and
// auto-stop's activity samples scrape the same way.
func generationScrape(in Inputs, gen int) drainCheck {
	mode := scrape.Mode(in.Config.MetricScrapeMode)
	if in.Instance.Found && in.Instance.Spec.MetricScrapeMode != "" {
		mode = scrape.Mode(in.Instance.Spec.MetricScrapeMode)
	}
	return drainCheck{
		Namespace: in.Namespace,
		Selector:  labels.SelectorFromSet(generationLabels(in.Engine, gen)),
		Options: scrape.Options{
			Mode:           mode,
			PodTimeout:     in.Config.Scrape.PodTimeout,
			OverallTimeout: in.Config.Scrape.OverallTimeout,
			MaxBodyBytes:   in.Config.Scrape.MaxBodyBytes,
			Concurrency:    in.Config.Scrape.Concurrency,
			// One value per process in practice; see scrape.Limiter.
			MaxConcurrentScrapes: in.Config.Scrape.MaxConcurrentScrapes,
		},
	}
}

// stuckStatefulSet is a current StatefulSet whose events are worth reading.
type stuckStatefulSet struct {
	Name string
	UID  types.UID
}

// dueWarningLookup says whether the current generation's StatefulSet is
// stuck short of pods (it exists and has fewer pods than the spec asks
// for), the only case in which its Warning events can explain anything.
func dueWarningLookup(in Inputs) (stuckStatefulSet, bool) {
	if in.Namespace == "" {
		return stuckStatefulSet{}, false
	}
	obs := in.Observed[resourceName(in.Status.CurrentGeneration, suffixStatefulSet)]
	if obs == nil || obs.GetUID() == "" {
		return stuckStatefulSet{}, false
	}
	if obs.number("status", "replicas") >= int64(in.Spec.Replicas) {
		return stuckStatefulSet{}, false
	}
	return stuckStatefulSet{Name: obs.GetName(), UID: obs.GetUID()}, true
}

// latestWarning picks the most recently seen event; the first of equals.
// The caller's slice is left as it was.
func latestWarning(name string, events []corev1.Event) *StatefulSetWarning {
	if len(events) == 0 {
		return nil
	}
	e := events[0]
	for _, c := range events[1:] {
		if lastSeen(c).After(lastSeen(e)) {
			e = c
		}
	}
	count := e.Count
	if e.Series != nil && e.Series.Count > count {
		count = e.Series.Count
	}
	return &StatefulSetWarning{StatefulSet: name, Reason: e.Reason, Message: e.Message, Count: count}
}

func lastSeen(e corev1.Event) time.Time {
	t := e.FirstTimestamp.Time
	for _, c := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}
