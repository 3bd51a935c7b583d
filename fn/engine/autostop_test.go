package engine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

func TestAutoStopSpecFallsBackWhole(t *testing.T) {
	engineOff := &v1alpha1.AutoStopSpec{Enabled: false, ActiveReplicas: 1}
	classOn := &v1alpha1.AutoStopSpec{Enabled: true, ActiveReplicas: 3}
	withClass := func(engine *v1alpha1.AutoStopSpec) Inputs {
		in := Inputs{Spec: v1alpha1.FireboltEngineSpec{AutoStop: engine}}
		in.Class = ClassRef{Name: "big", Resolved: true, Found: true, Published: true, Spec: v1alpha1.FireboltEngineClassSpec{AutoStop: classOn}}
		return in
	}
	cases := map[string]struct {
		reason string
		in     Inputs
		want   *v1alpha1.AutoStopSpec
		class  string
	}{
		"EngineOwn": {
			reason: "An engine's autoStop, even a disabled one, hides every field of the class's.",
			in:     withClass(engineOff), want: engineOff,
		},
		"ClassFallback": {
			reason: "Without its own, an engine runs its class's.",
			in:     withClass(nil), want: classOn, class: "big",
		},
		"Neither": {
			reason: "No class, no autoStop.",
			in:     Inputs{}, want: nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, class := autoStopSpec(tc.in)
			if got != tc.want || class != tc.class {
				t.Errorf("%s\nautoStopSpec: %+v from class %q, want %+v from class %q", tc.reason, got, class, tc.want, tc.class)
			}
		})
	}
}

func TestValidateAutoStopNamesTheClass(t *testing.T) {
	in := Inputs{}
	in.Class = ClassRef{Name: "big", Resolved: true, Found: true, Published: true,
		Spec: v1alpha1.FireboltEngineClassSpec{AutoStop: &v1alpha1.AutoStopSpec{Enabled: true, ActiveReplicas: 0}}}
	want := &rejection{Reason: ReasonLimitExceeded, Message: "FireboltEngineClass big: spec.autoStop.activeReplicas: Invalid value: 0: must be between 1 and 1000"}
	if diff := cmp.Diff(want, validateAutoStop(in)); diff != "" {
		t.Errorf("validateAutoStop: -want, +got:\n%s", diff)
	}
}

func TestActivitySample(t *testing.T) {
	cases := map[string]struct {
		obs  scrape.Observation
		want autostop.Sample
	}{
		"Quiet":         {scrape.Observation{Pods: []scrape.PodResult{{Pod: "a"}, {Pod: "b"}}}, autostop.Observed(0)},
		"Summed":        {scrape.Observation{Pods: []scrape.PodResult{{Pod: "a", Running: 2}, {Pod: "b", Suspended: 3}}}, autostop.Observed(5)},
		"Fraction":      {scrape.Observation{Pods: []scrape.PodResult{{Pod: "a", Running: 0.25}}}, autostop.Observed(1)},
		"Huge":          {scrape.Observation{Pods: []scrape.PodResult{{Pod: "a", Running: 1e300}, {Pod: "b", Running: 1e300}}}, autostop.Observed(1 << 62)},
		"ListFailed":    {scrape.Observation{Err: errors.New("forbidden")}, autostop.Failed("forbidden")},
		"NoRunningPod":  {scrape.Observation{Skipped: []string{"a"}}, autostop.Failed("no Running pod of the active generation to scrape")},
		"OnePodFailing": {scrape.Observation{Pods: []scrape.PodResult{{Pod: "a", Running: 3}, {Pod: "b", Err: errors.New("timeout")}}}, autostop.Failed("pod b: timeout")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := activitySample(tc.obs); got != tc.want {
				t.Errorf("activitySample: got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDueActivitySample(t *testing.T) {
	on := &v1alpha1.AutoStopSpec{Enabled: true, ActiveReplicas: 2}
	zero := int32(0)
	cases := map[string]struct {
		in      Inputs
		wantGen int
		due     bool
	}{
		"Stable": {
			in:      Inputs{Namespace: "ns", Spec: v1alpha1.FireboltEngineSpec{Replicas: 2, AutoStop: on}, Status: v1alpha1.FireboltEngineStatus{Phase: "stable", ActiveGeneration: 4}},
			wantGen: 4, due: true,
		},
		"Rolling": {
			in: Inputs{Namespace: "ns", Spec: v1alpha1.FireboltEngineSpec{Replicas: 2, AutoStop: on}, Status: v1alpha1.FireboltEngineStatus{Phase: "draining", ActiveGeneration: 4}},
		},
		"Disabled": {
			in: Inputs{Namespace: "ns", Spec: v1alpha1.FireboltEngineSpec{Replicas: 2}, Status: v1alpha1.FireboltEngineStatus{Phase: "stable", ActiveGeneration: 4}},
		},
		"AtZero": {
			in: Inputs{Namespace: "ns", Spec: v1alpha1.FireboltEngineSpec{Replicas: 2, AutoStop: on}, Status: v1alpha1.FireboltEngineStatus{
				Phase: "stopped", ActiveGeneration: 4, AutoStop: &v1alpha1.AutoStopStatus{Replicas: &zero, Reason: "Idle"}}},
		},
		"NoActiveGeneration": {
			in:      Inputs{Namespace: "ns", Spec: v1alpha1.FireboltEngineSpec{Replicas: 2, AutoStop: on}, Status: v1alpha1.FireboltEngineStatus{Phase: "stable", ActiveGeneration: -1}},
			wantGen: -1, due: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gen, due := dueActivitySample(tc.in)
			if gen != tc.wantGen || due != tc.due {
				t.Errorf("dueActivitySample: generation %d, due %v; want %d, %v", gen, due, tc.wantGen, tc.due)
			}
		})
	}
}
