package engine

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

func TestDueDrainCheck(t *testing.T) {
	draining := func(t *testing.T) Inputs { return drainingAt(t, "draining", 0, baseSpec(), replicasSpec(3)) }
	opts := func(mode scrape.Mode) scrape.Options {
		return scrape.Options{Mode: mode, PodTimeout: 2 * time.Second, OverallTimeout: 10 * time.Second, MaxBodyBytes: 1 << 20, Concurrency: 16, MaxConcurrentScrapes: 64}
	}
	type due struct {
		Namespace, Selector string
		Options             scrape.Options
		Due                 bool
	}
	cases := map[string]struct {
		in   func(t *testing.T) Inputs
		want due
	}{
		"Draining": {
			in:   draining,
			want: due{Namespace: "firebolt", Selector: "firebolt.io/engine=demo,firebolt.io/generation=0", Options: opts(scrape.ModeApiserverProxy), Due: true},
		},
		"ModeFromTheInstance": {
			in: func(t *testing.T) Inputs {
				in := draining(t)
				in.Instance.Spec.MetricScrapeMode = v1alpha1.MetricScrapeModePodIP
				return in
			},
			want: due{Namespace: "firebolt", Selector: "firebolt.io/engine=demo,firebolt.io/generation=0", Options: opts(scrape.ModePodIP), Due: true},
		},
		"NotWhileCleaning": {
			in: func(t *testing.T) Inputs { return drainingAt(t, "cleaning", 0, baseSpec(), replicasSpec(3)) },
		},
		"NotWhileStable": {
			in: func(t *testing.T) Inputs { return stableAt(t, 0, baseSpec()) },
		},
		"NotForRecreate": {
			in: func(t *testing.T) Inputs {
				in := draining(t)
				in.Spec.Rollout = v1alpha1.RolloutRecreate
				return in
			},
		},
		"NotWhenDisabled": {
			in: func(t *testing.T) Inputs {
				in := draining(t)
				in.Spec.DrainCheckEnabled = ptrTo(false)
				return in
			},
		},
		"NotWhenTheStatefulSetIsGone": {
			in: func(t *testing.T) Inputs {
				in := draining(t)
				delete(in.Observed, "g0-statefulset")
				return in
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, ok := dueDrainCheck(tc.in(t))
			got := due{Due: ok}
			if ok {
				got = due{Namespace: d.Namespace, Selector: d.Selector.String(), Options: d.Options, Due: true}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("dueDrainCheck: -want, +got:\n%s", diff)
			}
		})
	}
}

func TestDueWarningLookup(t *testing.T) {
	cases := map[string]struct {
		in   func(t *testing.T) Inputs
		want stuckStatefulSet
		due  bool
	}{
		"StuckShortOfPods": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{1, 0})
				return in
			},
			want: stuckStatefulSet{Name: "demo-g0", UID: "uid-g0-statefulset"}, due: true,
		},
		"AllPodsCreated": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{2, 0})
				return in
			},
		},
		"NoStatefulSet": {
			in: func(t *testing.T) Inputs { return testInputs(t, "creating", 0, -1) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, due := dueWarningLookup(tc.in(t))
			if due != tc.due || got != tc.want {
				t.Errorf("dueWarningLookup: want %+v, %v; got %+v, %v", tc.want, tc.due, got, due)
			}
		})
	}
}

func TestLatestWarning(t *testing.T) {
	at := func(m int) metav1.Time { return metav1.NewTime(testNow.Add(time.Duration(m) * time.Minute)) }
	events := []corev1.Event{
		{Reason: "Old", Message: "old", Count: 9, LastTimestamp: at(1)},
		{Reason: "Series", Message: "series", Series: &corev1.EventSeries{Count: 5, LastObservedTime: metav1.NewMicroTime(at(5).Time)}, EventTime: metav1.NewMicroTime(at(2).Time)},
		{Reason: "FailedCreate", Message: "newest", Count: 2, FirstTimestamp: at(0), LastTimestamp: at(7)},
	}
	want := &StatefulSetWarning{StatefulSet: "demo-g1", Reason: "FailedCreate", Message: "newest", Count: 2}
	if diff := cmp.Diff(want, latestWarning("demo-g1", events)); diff != "" {
		t.Errorf("latestWarning: -want, +got:\n%s", diff)
	}
	want = &StatefulSetWarning{StatefulSet: "demo-g1", Reason: "Series", Message: "series", Count: 5}
	if diff := cmp.Diff(want, latestWarning("demo-g1", events[:2])); diff != "" {
		t.Errorf("latestWarning of a series: -want, +got:\n%s", diff)
	}
	if got := latestWarning("demo-g1", nil); got != nil {
		t.Errorf("latestWarning(nil): want nil, got %+v", got)
	}
}

type recordingProber struct {
	calls []string
	v     scrape.Verdict
	obs   scrape.Observation
}

func (p *recordingProber) Drain(_ context.Context, ns string, sel labels.Selector, o scrape.Options) scrape.Verdict {
	p.calls = append(p.calls, ns+"/"+sel.String()+"/"+string(o.Mode))
	return p.v
}

func (p *recordingProber) Activity(_ context.Context, ns string, sel labels.Selector, o scrape.Options) scrape.Observation {
	p.calls = append(p.calls, "activity:"+ns+"/"+sel.String()+"/"+string(o.Mode))
	return p.obs
}

type recordingEvents struct {
	calls  []string
	events []corev1.Event
	err    error
}

func (e *recordingEvents) Warnings(_ context.Context, ns string, uid types.UID) ([]corev1.Event, error) {
	e.calls = append(e.calls, ns+"/"+string(uid))
	return e.events, e.err
}

// TestGather checks the read layer asks for live signals only when they
// are due, and that a failing event lookup never fails the call.
func TestGather(t *testing.T) {
	warning := corev1.Event{Reason: "FailedCreate", Message: "quota", Count: 1}
	cases := map[string]struct {
		in          func(t *testing.T) Inputs
		events      *recordingEvents
		wantProbes  []string
		wantLookups []string
		want        Signals
	}{
		"DrainingProbesOnly": {
			in:         func(t *testing.T) Inputs { return drainingAt(t, "draining", 0, baseSpec(), replicasSpec(3)) },
			events:     &recordingEvents{},
			wantProbes: []string{"firebolt/firebolt.io/engine=demo,firebolt.io/generation=0/ApiserverProxy"},
			want:       Signals{Drain: &scrape.Verdict{Drained: true}},
		},
		"StuckLooksUpEvents": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{0, 0})
				return in
			},
			events:      &recordingEvents{events: []corev1.Event{warning}},
			wantLookups: []string{"firebolt/uid-g0-statefulset"},
			want:        Signals{Warning: &StatefulSetWarning{StatefulSet: "demo-g0", Reason: "FailedCreate", Message: "quota", Count: 1}},
		},
		"EventLookupFailureIsSwallowed": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{0, 0})
				return in
			},
			events:      &recordingEvents{err: errors.New("forbidden")},
			wantLookups: []string{"firebolt/uid-g0-statefulset"},
		},
		"StableNeedsNothing": {
			in:     func(t *testing.T) Inputs { return stableAt(t, 0, baseSpec()) },
			events: &recordingEvents{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &recordingProber{v: scrape.Verdict{Drained: true}}
			c := New(p, tc.events)
			got := c.gather(context.Background(), logging.NewNopLogger(), tc.in(t), testNow, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("gather: -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantProbes, p.calls); diff != "" {
				t.Errorf("drain checks: -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLookups, tc.events.calls); diff != "" {
				t.Errorf("event lookups: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestGatherWithoutDependencies: a composer built without a prober still
// never deletes an undrained generation; it says the check did not run.
func TestGatherWithoutDependencies(t *testing.T) {
	in := drainingAt(t, "draining", 0, baseSpec(), replicasSpec(3))
	c := New(nil, nil)
	p := Compute(in, c.gather(context.Background(), logging.NewNopLogger(), in, testNow, nil), testNow)
	if p.Status.Phase != v1alpha1.EnginePhaseDraining || p.Conditions[0].Reason != ReasonDrainCheckFailing {
		t.Errorf("without a prober: want draining with DrainCheckFailing, got %s with %s", p.Status.Phase, p.Conditions[0].Reason)
	}
}
