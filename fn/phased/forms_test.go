package phased_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/phasedrollout"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

// outcomeRunner answers every check with one outcome and counts the runs.
type outcomeRunner struct {
	outcome promcheck.Outcome
	runs    atomic.Int32
}

func (r *outcomeRunner) Run(context.Context, v1alpha1.PrometheusQuery, promcheck.Credentials, time.Time) promcheck.Outcome {
	r.runs.Add(1)
	return r.outcome
}

// TestStepTableThroughPhasedRollout replays the step table, and its
// idempotence, through
// RunFunction for the PhasedRollout form: the table's StatefulSet is the
// claim's target (a required resource), its previous status the
// composite's, its check outcome what Prometheus answers. Every final
// decision must come out as the table says: the partition the Object
// sets, the status, the TTL and the events. Rows that decide from the
// revision of a pod other than the one at the partition (which no form
// reads), rows that only the other forms
// reach (a drain gate, no check block, a template the function renders, a
// replica count the caller renders) and the first stage of two-stage rows
// (one RunFunction call runs both stages) are left out.
func TestStepTableThroughPhasedRollout(t *testing.T) {
	replayed, unread := 0, 0
	for _, tc := range phased.StepTable() {
		in := tc.In
		if tc.Want.Need != phased.NeedNothing || in.Drain != nil || in.Unchecked || in.TemplateChanged ||
			in.Observed == nil || in.Replicas != in.Observed.SpecReplicas {
			continue
		}
		if in.CheckOutcome != nil {
			first := in
			first.CheckOutcome = nil
			if phased.Step(first).Need != phased.NeedCheck {
				// An outcome no call of this form would hold.
				continue
			}
		}
		if !cmp.Equal(phased.Step(asRead(in)), tc.Want) {
			// The row decides from the revision of a pod other than the
			// one at the partition, which no form reads.
			unread++
			continue
		}
		replayed++
		t.Run(tc.Name, func(t *testing.T) {
			runner := &outcomeRunner{}
			if o := in.CheckOutcome; o != nil {
				runner.outcome = promcheck.Outcome{Succeeded: o.Succeeded, Message: o.Message}
				if o.Err {
					runner.outcome.Cause = promcheck.CauseTransport
				}
			}
			f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{
				v1alpha1.XPhasedRolloutKind: phasedrollout.New(runner, phasedrollout.WithClock(func() time.Time { return in.Now })),
			})
			rsp, err := f.RunFunction(context.Background(), tableRequest(t, in))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					t.Fatalf("fatal result: %s", r.GetMessage())
				}
			}
			if want, got := int32(0), runner.runs.Load(); in.CheckOutcome != nil {
				want = 1
				if got != want {
					t.Errorf("%s\nthe check ran %d times, want %d", tc.Reason, got, want)
				}
			} else if got != want {
				t.Errorf("%s\nthe check ran %d times, want none", tc.Reason, got)
			}

			obj := rsp.GetDesired().GetResources()[phasedrollout.ResourceName].GetResource().AsMap()
			partition := obj["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"].(map[string]any)["spec"].(map[string]any)["updateStrategy"].(map[string]any)["rollingUpdate"].(map[string]any)["partition"]
			if partition != float64(tc.Want.Partition) {
				t.Errorf("%s\nthe Object sets partition %v, want %d", tc.Reason, partition, tc.Want.Partition)
			}
			wantStatus := tc.Want.Status
			if wantStatus == nil {
				wantStatus = in.Previous
			}
			var got v1alpha1.PhasedRolloutStatus
			b, _ := json.Marshal(rsp.GetDesired().GetComposite().GetResource().AsMap()["status"])
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			want := v1alpha1.PhasedRolloutStatus{}
			if wantStatus != nil {
				want = *wantStatus
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nstatus: -table, +PhasedRollout:\n%s", tc.Reason, diff)
			}
			wantTTL := tc.Want.TTL
			if wantTTL == 0 {
				wantTTL = v1beta1.DefaultStableTTL
			}
			if got := rsp.GetMeta().GetTtl().AsDuration(); got != wantTTL {
				t.Errorf("%s\nTTL %s, want %s", tc.Reason, got, wantTTL)
			}
			wantEvents := make([]string, 0, len(tc.Want.Events))
			gotEvents := make([]string, 0, len(rsp.GetResults()))
			for _, e := range tc.Want.Events {
				wantEvents = append(wantEvents, string(e.Type)+" "+e.Reason+": "+e.Message)
			}
			for _, r := range rsp.GetResults() {
				sev := "Normal"
				if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
					sev = "Warning"
				}
				gotEvents = append(gotEvents, sev+" "+r.GetReason()+": "+r.GetMessage())
			}
			if diff := cmp.Diff(wantEvents, gotEvents); diff != "" {
				t.Errorf("%s\nevents: -table, +PhasedRollout:\n%s", tc.Reason, diff)
			}

			// Idempotence: the same observation with the status just
			// written decides the same, with no event and no check, unless
			// the row says the next call needs one.
			again := in
			again.Previous = &got
			runs := runner.runs.Load()
			rsp2, err := f.RunFunction(context.Background(), tableRequest(t, again))
			if err != nil {
				t.Fatal(err)
			}
			if tc.NextNeeds {
				if runner.runs.Load() == runs {
					t.Errorf("%s\nthe second call ran no check; the row says it needs one", tc.Reason)
				}
				return
			}
			if n := runner.runs.Load() - runs; n != 0 {
				t.Errorf("%s\nthe second call ran %d checks, want none", tc.Reason, n)
			}
			if diff := cmp.Diff(obj, rsp2.GetDesired().GetResources()[phasedrollout.ResourceName].GetResource().AsMap()); diff != "" {
				t.Errorf("%s\nthe second call's Object: -first, +second:\n%s", tc.Reason, diff)
			}
			if diff := cmp.Diff(rsp.GetDesired().GetComposite().GetResource().AsMap()["status"], rsp2.GetDesired().GetComposite().GetResource().AsMap()["status"]); diff != "" {
				t.Errorf("%s\nthe second call's status: -first, +second:\n%s", tc.Reason, diff)
			}
			if a, b := rsp.GetMeta().GetTtl().AsDuration(), rsp2.GetMeta().GetTtl().AsDuration(); a != b {
				t.Errorf("%s\nthe second call's TTL %s, the first's %s", tc.Reason, b, a)
			}
			if r := rsp2.GetResults(); len(r) != 0 {
				t.Errorf("%s\nthe second call's events: %v, want none", tc.Reason, r)
			}
		})
	}
	if replayed < 30 {
		t.Errorf("only %d rows of the step table replayed; the filter above drops too much", replayed)
	}
	t.Logf("%d rows replayed; %d rows decide from pods no form reads", replayed, unread)
}

// asRead is in as a form reads it: of the pods, only the one at the
// StatefulSet's partition.
func asRead(in phased.Input) phased.Input {
	o := *in.Observed
	o.PodRevisions = nil
	p := int32(0)
	if o.Partition != nil {
		p = *o.Partition
	}
	if rev, ok := in.Observed.PodRevisions[p]; ok && p >= 0 && p < o.SpecReplicas {
		o.PodRevisions = map[int32]string{p: rev}
	}
	in.Observed = &o
	return in
}

// tableRequest is the RunFunction request of a table row for a
// PhasedRollout "web-sample" targeting StatefulSet apps/web.
func tableRequest(t *testing.T, in phased.Input) *fnv1.RunFunctionRequest {
	t.Helper()
	spec := map[string]any{"targetRef": "web", "standardRollingUpdate": in.StandardRollingUpdate, "check": toMap(t, in.Check)}
	xr := map[string]any{
		"apiVersion": "sts.plus/v1alpha1", "kind": "XPhasedRollout",
		"metadata": map[string]any{"name": "web-sample-x7k2p", "labels": map[string]any{
			"crossplane.io/claim-name": "web-sample", "crossplane.io/claim-namespace": "apps"}},
		"spec": spec,
	}
	if in.Previous != nil {
		xr["status"] = toMap(t, in.Previous)
	}
	claim := map[string]any{"apiVersion": "sts.plus/v1alpha1", "kind": "PhasedRollout",
		"metadata": map[string]any{"name": "web-sample", "namespace": "apps", "generation": int64(1)}, "spec": spec}
	o := in.Observed
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", Generation: o.Generation},
		Spec: appsv1.StatefulSetSpec{
			Replicas:       &o.SpecReplicas,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: o.Partition}},
		},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: o.ObservedGeneration, Replicas: o.Replicas, UpdatedReplicas: o.UpdatedReplicas,
			AvailableReplicas: o.AvailableReplicas, CurrentRevision: o.CurrentRevision, UpdateRevision: o.UpdateRevision,
		},
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "table"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr)}},
		RequiredResources: map[string]*fnv1.Resources{
			"claim":                 {Items: []*fnv1.Resource{{Resource: mustStruct(t, claim)}}},
			phasedrollout.ReqTarget: {Items: []*fnv1.Resource{{Resource: mustStruct(t, toMap(t, sts))}}},
		},
	}
	if ordinal, ok := phased.RolledPod(sts); ok {
		if rev, ok := o.PodRevisions[ordinal]; ok {
			pod := &corev1.Pod{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: phased.PodName("web", ordinal), Namespace: "apps",
					Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: rev}},
			}
			req.RequiredResources[phasedrollout.ReqRolledPod] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: mustStruct(t, toMap(t, pod))}}}
		}
	}
	return req
}

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
