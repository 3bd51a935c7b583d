package fn

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// recorder is a composer that records what it was given and answers with a
// marker condition, so a test sees which composer ran with which input.
type recorder struct {
	name string
	err  error
	got  *v1beta1.Resolved
}

func (r *recorder) Compose(_ context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error {
	r.got = &call.Config
	if r.err != nil {
		return r.err
	}
	response.ConditionTrue(rsp, "ComposedBy", r.name)
	return nil
}

func newRequest(kind, input string) *fnv1.RunFunctionRequest {
	req := &fnv1.RunFunctionRequest{
		Meta: &fnv1.RequestMeta{Tag: "t"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
			`{"apiVersion":"compute.firebolt.io/v1alpha1","kind":"` + kind + `","metadata":{"name":"demo-x1"}}`)}},
	}
	if input != "" {
		req.Input = resource.MustStructJSON(input)
	}
	return req
}

func fatal(msg string) *fnv1.RunFunctionResponse {
	return &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: "t", Ttl: durationpb.New(response.DefaultTTL)},
		Results: []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL, Message: msg, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}},
	}
}

func TestRunFunction(t *testing.T) {
	cases := map[string]struct {
		reason  string
		req     *fnv1.RunFunctionRequest
		compErr error
		want    *fnv1.RunFunctionResponse
		ran     string
	}{
		"DispatchesEngine": {
			reason: "An XFireboltEngine goes to the engine composer, nothing else.",
			req:    newRequest(v1alpha1.XFireboltEngineKind, ""),
			ran:    v1alpha1.XFireboltEngineKind,
			want: &fnv1.RunFunctionResponse{
				Meta:       &fnv1.ResponseMeta{Tag: "t", Ttl: durationpb.New(response.DefaultTTL)},
				Conditions: []*fnv1.Condition{{Type: "ComposedBy", Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: v1alpha1.XFireboltEngineKind, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}},
			},
		},
		"DispatchesInstance": {
			reason: "An XFireboltInstance goes to the instance composer.",
			req:    newRequest(v1alpha1.XFireboltInstanceKind, `{"apiVersion":"firebolt.fn.crossplane.io/v1beta1","kind":"Input"}`),
			ran:    v1alpha1.XFireboltInstanceKind,
			want: &fnv1.RunFunctionResponse{
				Meta:       &fnv1.ResponseMeta{Tag: "t", Ttl: durationpb.New(response.DefaultTTL)},
				Conditions: []*fnv1.Condition{{Type: "ComposedBy", Status: fnv1.Status_STATUS_CONDITION_TRUE, Reason: v1alpha1.XFireboltInstanceKind, Target: fnv1.Target_TARGET_COMPOSITE.Enum()}},
			},
		},
		"UnknownKind": {
			reason: "A composite of a kind this function does not compose is a fatal result naming the kind.",
			req:    newRequest("XSomethingElse", ""),
			want:   fatal(`cannot compose XSomethingElse "demo-x1": this function composes only XFireboltInstance, XFireboltEngine, XFireboltEngineClass, XPhasedStatefulSet and XPhasedRollout`),
		},
		"KindOfAnotherGroup": {
			reason: "Kinds are dispatched by name only within their own group: an XFireboltEngine of another group is refused.",
			req: &fnv1.RunFunctionRequest{
				Meta: &fnv1.RequestMeta{Tag: "t"},
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
					`{"apiVersion":"apps.firebolt.io/v1alpha1","kind":"XFireboltEngine","metadata":{"name":"demo-x1"}}`)}},
			},
			want: fatal(`cannot compose XFireboltEngine "demo-x1" of group "apps.firebolt.io": this function composes XFireboltEngine of group "compute.firebolt.io"`),
		},
		"UnknownInputField": {
			reason: "Input is decoded strictly: a typo is a fatal result, not a silently ignored setting.",
			req:    newRequest(v1alpha1.XFireboltEngineKind, `{"apiVersion":"firebolt.fn.crossplane.io/v1beta1","kind":"Input","spec":{"stableTTl":"1m"}}`),
			want:   fatal(`cannot decode function input: strict decoding error: unknown field "spec.stableTTl"`),
		},
		"InvalidPodSecurityInput": {
			reason: "An allow-list entry that could never match is a fatal result naming it.",
			req:    newRequest(v1alpha1.XFireboltEngineKind, `{"apiVersion":"firebolt.fn.crossplane.io/v1beta1","kind":"Input","spec":{"podSecurity":{"allowedHostPaths":["mnt/firebolt"]}}}`),
			want:   fatal(`invalid function input: spec.podSecurity.allowedHostPaths[0]: Invalid value: "mnt/firebolt": must be an absolute, clean path such as /mnt/firebolt`),
		},
		"InvalidInput": {
			reason: "Input that decodes but breaks a rule is a fatal result naming the field.",
			req:    newRequest(v1alpha1.XFireboltEngineKind, `{"apiVersion":"firebolt.fn.crossplane.io/v1beta1","kind":"Input","spec":{"metricScrapeMode":"Carrier"}}`),
			want:   fatal(`invalid function input: spec.metricScrapeMode: Unsupported value: "Carrier": supported values: "ApiserverProxy", "PodIP"`),
		},
		"ComposerFails": {
			reason:  "A composer's error is wrapped with the kind and name and becomes a fatal result.",
			req:     newRequest(v1alpha1.XFireboltEngineClassKind, ""),
			compErr: errors.New("boom"),
			ran:     v1alpha1.XFireboltEngineClassKind,
			want:    fatal(`cannot compose XFireboltEngineClass "demo-x1": boom`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			comps := map[string]*recorder{}
			all := map[string]Composer{}
			for _, k := range []string{v1alpha1.XFireboltEngineKind, v1alpha1.XFireboltEngineClassKind, v1alpha1.XFireboltInstanceKind} {
				comps[k] = &recorder{name: k, err: tc.compErr}
				all[k] = comps[k]
			}
			rsp, err := NewWithComposers(logging.NewNopLogger(), all).RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("%s\nRunFunction returned a transport error: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want rsp, +got rsp:\n%s", tc.reason, diff)
			}
			for k, r := range comps {
				if ran := r.got != nil; ran != (k == tc.ran) {
					t.Errorf("%s\ncomposer %s ran = %v", tc.reason, k, ran)
				}
			}
		})
	}
}

// TestDefaultInput shows that a Composition step without input composes
// with the documented defaults rather than zero values.
func TestDefaultInput(t *testing.T) {
	r := &recorder{name: v1alpha1.XFireboltEngineKind}
	f := NewWithComposers(logging.NewNopLogger(), map[string]Composer{v1alpha1.XFireboltEngineKind: r})
	if _, err := f.RunFunction(context.Background(), newRequest(v1alpha1.XFireboltEngineKind, "")); err != nil {
		t.Fatal(err)
	}
	want, err := (&v1beta1.Input{}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r.got == nil {
		t.Fatal("engine composer did not run")
	}
	if diff := cmp.Diff(want, *r.got); diff != "" {
		t.Errorf("resolved input (-want +got):\n%s", diff)
	}
	if r.got.Scrape.PodTimeout <= 0 || r.got.StableTTL <= 0 || r.got.Images.Engine == "" {
		t.Errorf("defaults not applied: %+v", *r.got)
	}
}

// TestInputDecoded shows that every kind of field in a Composition's input
// (strings, quantities, durations, integers that arrive as JSON numbers)
// reaches the composer with the values the user wrote.
func TestInputDecoded(t *testing.T) {
	r := &recorder{name: v1alpha1.XFireboltEngineKind}
	f := NewWithComposers(logging.NewNopLogger(), map[string]Composer{v1alpha1.XFireboltEngineKind: r})
	req := newRequest(v1alpha1.XFireboltEngineKind, `{"apiVersion":"firebolt.fn.crossplane.io/v1beta1","kind":"Input","spec":{
		"images":{"engine":"registry.example/engine:v2"},
		"engineResourceBounds":{"maxCPU":"8","maxMemory":"32Gi"},
		"metricScrapeMode":"PodIP",
		"scrape":{"podTimeout":"3s","overallTimeout":"20s","maxBodyBytes":65536,"concurrency":4,"maxConcurrentScrapes":128},
		"stableTTL":"45s"}}`)
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(rsp.GetResults()) != 0 {
		t.Fatalf("unexpected results: %v", rsp.GetResults())
	}
	if r.got == nil {
		t.Fatal("engine composer did not run")
	}
	want, err := (&v1beta1.Input{}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	want.Images.Engine = "registry.example/engine:v2"
	want.EngineResourceBounds = corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("8"), corev1.ResourceMemory: apiresource.MustParse("32Gi")}
	want.MetricScrapeMode = "PodIP"
	want.Scrape = v1beta1.ResolvedScrape{PodTimeout: 3 * time.Second, OverallTimeout: 20 * time.Second, MaxBodyBytes: 65536, Concurrency: 4, MaxConcurrentScrapes: 128}
	want.StableTTL = 45 * time.Second
	if diff := cmp.Diff(want, *r.got); diff != "" {
		t.Errorf("resolved input (-want +got):\n%s", diff)
	}
}
