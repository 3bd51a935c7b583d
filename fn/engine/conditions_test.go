package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

func falseCond(reason, msg string) Condition {
	return Condition{Type: TypeEngineReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
}

// TestEngineReadyPrecedence checks the order in which reasons win, one
// step of the ladder per case.
func TestEngineReadyPrecedence(t *testing.T) {
	notReady := instanceState{Message: "FireboltInstance firebolt/inst not found"}
	ready := instanceState{Ready: true}
	warn := &StatefulSetWarning{StatefulSet: "demo-g1", Reason: "Failed Create!", Message: " no quota ", Count: 0}
	cases := map[string]struct {
		f    readyFacts
		want Condition
	}{
		"InstanceNotReadyWinsOverEverything": {
			f: readyFacts{Phase: "stopped", Gated: true, Instance: notReady, ClassProblem: "missing",
				Rejection: &rejection{Reason: ReasonTemplateRejected, Message: "bad"}, Warning: warn},
			want: falseCond(ReasonInstanceNotReady, "FireboltInstance firebolt/inst not found"),
		},
		"InstanceIgnoredOutsideGatedPhases": {
			f:    readyFacts{Phase: "draining", Instance: notReady, Current: 3},
			want: falseCond(ReasonRolling, "Engine is rolling out generation 3"),
		},
		"MissingClassNext": {
			f:    readyFacts{Phase: "stable", Gated: true, Instance: ready, ClassProblem: "FireboltEngineClass firebolt/big not found", Rejection: &rejection{Reason: ReasonTemplateRejected, Message: "bad"}},
			want: falseCond(ReasonClassNotFound, "FireboltEngineClass firebolt/big not found"),
		},
		"DrainCheckFailingNamesPodAndCause": {
			f:    readyFacts{Phase: "draining", Instance: ready, DrainFailing: "pod demo-g0-1: timeout", DrainingGen: 0, Rejection: &rejection{Reason: ReasonTemplateRejected, Message: "bad"}},
			want: falseCond(ReasonDrainCheckFailing, "drain check of generation 0 is failing: pod demo-g0-1: timeout"),
		},
		"RejectionOverStopped": {
			f:    readyFacts{Phase: "stopped", Gated: true, Instance: ready, Rejection: &rejection{Reason: ReasonResourceBoundsExceeded, Message: "too big"}},
			want: falseCond(ReasonResourceBoundsExceeded, "too big"),
		},
		"StoppedOverRolling": {
			f:    readyFacts{Phase: "stopped", Gated: true, Instance: ready, Warning: warn},
			want: falseCond(ReasonStopped, "Engine is stopped (spec.replicas is 0)"),
		},
		"InitializingOnTheFirstCall": {
			f:    readyFacts{Phase: "creating", Initializing: true, Gated: true, Instance: ready},
			want: falseCond(ReasonInitializing, "Engine is initializing"),
		},
		"Rolling": {
			f:    readyFacts{Phase: "creating", Gated: true, Instance: ready, Current: 1},
			want: falseCond(ReasonRolling, "Engine is rolling out generation 1"),
		},
		"RollingRefinedByAWarningWithASanitisedReason": {
			f:    readyFacts{Phase: "creating", Gated: true, Instance: ready, Warning: warn},
			want: falseCond("FailedCreate", "StatefulSet demo-g1: no quota (x1)"),
		},
		"WarningReasonFallsBack": {
			f:    readyFacts{Phase: "switching", Instance: ready, Warning: &StatefulSetWarning{StatefulSet: "demo-g1", Reason: "4xx", Message: "m", Count: 7}},
			want: falseCond(ReasonStatefulSetWarning, "StatefulSet demo-g1: m (x7)"),
		},
		"PodsNotReady": {
			f:    readyFacts{Phase: "stable", Gated: true, Instance: ready, Active: 2, ActivePods: podsState{Exists: true, ReadyReplicas: 1, Desired: 3}},
			want: falseCond(ReasonPodsNotReady, "generation 2 has 1 of 3 pod(s) ready"),
		},
		"PodsNotReadyRefinedByAWarning": {
			f:    readyFacts{Phase: "stable", Gated: true, Instance: ready, Active: 2, Warning: warn},
			want: falseCond("FailedCreate", "StatefulSet demo-g1: no quota (x1)"),
		},
		"EngineReady": {
			f:    readyFacts{Phase: "stable", Gated: true, Instance: ready, Active: 2, ActivePods: podsState{Exists: true, Ready: true}},
			want: Condition{Type: TypeEngineReady, Status: metav1.ConditionTrue, Reason: ReasonEngineReady, Message: "serving traffic on generation 2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, engineReady(tc.f)); diff != "" {
				t.Errorf("engineReady(...): -want, +got:\n%s", diff)
			}
		})
	}
}

// TestComputeConditions checks whole conditions, messages included, for
// the reasons that carry details from inputs or signals.
func TestComputeConditions(t *testing.T) {
	cases := map[string]struct {
		in   func(t *testing.T) Inputs
		sig  Signals
		want []Condition
	}{
		"InstanceNotReadyNamesEverythingMissing": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Instance.Status = v1alpha1.FireboltInstanceStatus{}
				in.Instance.Spec.ID = ""
				return in
			},
			want: []Condition{
				falseCond(ReasonInstanceNotReady, "FireboltInstance firebolt/inst is not ready: its metadata service is not ready (status.metadataReady is false); it publishes no metadata endpoint (status.metadataEndpoint is empty); it has no id (spec.id and status.id are empty)"),
				{Type: TypeInstanceReady, Status: metav1.ConditionFalse, Reason: ReasonInstanceNotReady, Message: "FireboltInstance firebolt/inst is not ready: its metadata service is not ready (status.metadataReady is false); it publishes no metadata endpoint (status.metadataEndpoint is empty); it has no id (spec.id and status.id are empty)"},
			},
		},
		"InstanceNotFetchedYetIsAWait": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				in.Instance = InstanceRef{Name: "inst"}
				return in
			},
			want: []Condition{
				falseCond(ReasonInstanceNotReady, "waiting for Crossplane to fetch FireboltInstance firebolt/inst"),
				{Type: TypeInstanceReady, Status: metav1.ConditionUnknown, Reason: ReasonInstanceNotReady, Message: "waiting for Crossplane to fetch FireboltInstance firebolt/inst"},
			},
		},
		"InstanceIDFromStatus": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Instance.Status.ID = in.Instance.Spec.ID
				in.Instance.Spec.ID = ""
				return in
			},
			want: []Condition{
				{Type: TypeEngineReady, Status: metav1.ConditionTrue, Reason: ReasonEngineReady, Message: "serving traffic on generation 0"},
				{Type: TypeInstanceReady, Status: metav1.ConditionTrue, Reason: ReasonInstanceReady, Message: "FireboltInstance firebolt/inst is ready"},
			},
		},
		"ClassNotFound": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec.EngineClassRef = classRef("big")
				in.Class = ClassRef{Name: "big", SpecResolved: true, Resolved: true}
				return in
			},
			want: []Condition{
				falseCond(ReasonClassNotFound, "FireboltEngineClass firebolt/big not found: create it or change spec.engineClassRef"),
				{Type: TypeInstanceReady, Status: metav1.ConditionTrue, Reason: ReasonInstanceReady, Message: "FireboltInstance firebolt/inst is ready"},
			},
		},
		"TemplateRejectedNamesFieldPaths": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Spec.EngineClassRef = classRef("big")
				in.Class = foundClass("big", corev1.PodTemplateSpec{Spec: corev1.PodSpec{HostNetwork: true}})
				in.Spec.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "engine",
					Env:  []corev1.EnvVar{{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "inst-metadata-postgres-creds"}, Key: "password"}}}},
				}}}}
				return in
			},
			want: []Condition{
				falseCond(ReasonTemplateRejected, `spec.template.spec.containers[engine].env[PW].valueFrom.secretKeyRef.name: Forbidden: Secret "inst-metadata-postgres-creds" is operator-protected and may not be referenced; FireboltEngineClass big: spec.template.spec.hostNetwork: Forbidden: not permitted on operator-managed pods`),
				{Type: TypeInstanceReady, Status: metav1.ConditionTrue, Reason: ReasonInstanceReady, Message: "FireboltInstance firebolt/inst is ready"},
			},
		},
		"ResourceBoundsInheritedFromTheClass": {
			in: func(t *testing.T) Inputs {
				in := stableAt(t, 0, baseSpec())
				in.Config.EngineResourceBounds = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
				in.Spec.EngineClassRef = classRef("big")
				in.Class = foundClass("big", corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "engine", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")}},
				}}}})
				return in
			},
			want: []Condition{
				falseCond(ReasonResourceBoundsExceeded, `spec.template.spec.containers[engine].resources.requests[cpu]: Invalid value: "16": exceeds maximum 8 (inherited from FireboltEngineClass big)`),
				{Type: TypeInstanceReady, Status: metav1.ConditionTrue, Reason: ReasonInstanceReady, Message: "FireboltInstance firebolt/inst is ready"},
			},
		},
		"DrainCheckFailing": {
			in:  func(t *testing.T) Inputs { return drainingAt(t, "draining", 4, baseSpec(), replicasSpec(3)) },
			sig: Signals{Drain: &scrape.Verdict{Failing: true, Message: "pod demo-g4-0: cannot scrape metrics: no Kubernetes client configured"}},
			want: []Condition{
				falseCond(ReasonDrainCheckFailing, "drain check of generation 4 is failing: pod demo-g4-0: cannot scrape metrics: no Kubernetes client configured"),
				{Type: TypeInstanceReady, Status: metav1.ConditionTrue, Reason: ReasonInstanceReady, Message: "FireboltInstance firebolt/inst is ready"},
			},
		},
		"StatefulSetWarningWhileCreating": {
			in: func(t *testing.T) Inputs {
				in := testInputs(t, "creating", 0, -1)
				withGeneration(&in, 0, baseSpec(), pods{0, 0})
				return in
			},
			sig: Signals{Warning: &StatefulSetWarning{StatefulSet: "demo-g0", Reason: "FailedCreate", Message: `create Pod demo-g0-0 in StatefulSet demo-g0 failed error: pods "demo-g0-0" is forbidden: error looking up service account firebolt/engines`, Count: 12}},
			want: []Condition{
				falseCond("FailedCreate", `StatefulSet demo-g0: create Pod demo-g0-0 in StatefulSet demo-g0 failed error: pods "demo-g0-0" is forbidden: error looking up service account firebolt/engines (x12)`),
				{Type: TypeInstanceReady, Status: metav1.ConditionTrue, Reason: ReasonInstanceReady, Message: "FireboltInstance firebolt/inst is ready"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Compute(tc.in(t), tc.sig, testNow).Conditions
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compute(...).Conditions: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestEngineReadyStaysPutThroughARollout: every step of one rollout
// reports the same EngineReady, so Crossplane writes the condition when
// the rollout starts and when it ends, not at every step; status.phase has
// the step.
func TestEngineReadyStaysPutThroughARollout(t *testing.T) {
	first := engineReady(readyFacts{Phase: "creating", Gated: true, Instance: instanceState{Ready: true}, Current: 4, Active: 3})
	for _, phase := range []v1alpha1.EnginePhase{"switching", "draining", "cleaning"} {
		got := engineReady(readyFacts{Phase: phase, Instance: instanceState{Ready: true}, Current: 4, Active: 4, DrainingGen: 3})
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("EngineReady in %s differs from creating's, one more write of the composite: -creating, +%s:\n%s", phase, phase, diff)
		}
	}
}
