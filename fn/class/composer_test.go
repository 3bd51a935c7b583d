package class_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/class"
)

const (
	admissibleTemplate = `{"spec": {"nodeSelector": {"pool": "firebolt-engines"}, "containers": [{"name": "engine", "resources": {"requests": {"cpu": "2"}}}]}}`
	rejectedTemplate   = `{"spec": {"containers": [{"name": "engine", "env": [{"name": "POD_INDEX", "value": "0"}], "volumeMounts": [{"name": "engine-config", "mountPath": "/x"}]}]}}`
	rejectedMessage    = `spec.template is rejected: spec.template.spec.containers[engine].env[POD_INDEX]: Forbidden: reserved name: set by the operator; ` +
		`spec.template.spec.containers[engine].volumeMounts[engine-config]: Forbidden: reserved name: mounted by the operator`
)

// The ConfigMaps publishing the two templates: the spec's own fields as
// JSON, keys sorted, none of Crossplane's (claimRef, resourceRefs).
const (
	admissibleData = `{"rollout":"recreate","template":{"spec":{"containers":[{"name":"engine","resources":{"requests":{"cpu":"2"}}}],"nodeSelector":{"pool":"firebolt-engines"}}}}`
	rejectedData   = `{"rollout":"recreate","template":{"spec":{"containers":[{"env":[{"name":"POD_INDEX","value":"0"}],"name":"engine","volumeMounts":[{"mountPath":"/x","name":"engine-config"}]}]}}}`
)

// hugeTemplate's spec is longer, as JSON, than a ConfigMap holds.
var hugeTemplate = `{"metadata": {"annotations": {"x": "` + strings.Repeat("x", 1<<20) + `"}}}`

const tooLarge = "spec is 1048647 bytes as JSON, more than the 1048572 a ConfigMap holds"

func ptr[T any](v T) *T { return &v }

// now is the composer's clock in these tests, and the lastReconciled it
// stamps.
const now = "2026-01-02T03:04:05Z"

func clock() time.Time {
	t, err := time.Parse(time.RFC3339, now)
	if err != nil {
		panic(err)
	}
	return t
}

func composer() *class.Composer { return class.New(class.WithClock(clock)) }

func xr(template, status string) *structpb.Struct {
	s := `{
  "apiVersion": "compute.firebolt.io/v1alpha1",
  "kind": "XFireboltEngineClass",
  "metadata": {"name": "standard-9d2kw", "generation": 4,
    "labels": {"crossplane.io/claim-name": "standard", "crossplane.io/claim-namespace": "firebolt"}},
  "spec": {"template": ` + template + `, "rollout": "recreate",
    "claimRef": {"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngineClass", "name": "standard", "namespace": "firebolt"},
    "resourceRefs": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "standard-engineclass"}]}`
	if status != "" {
		s += `, "status": ` + status
	}
	return resource.MustStructJSON(s + "}")
}

// binding is the ConfigMap binding engine to class, as Crossplane lists it
// by its firebolt.io/engine-class-binding label; deleting marks one
// Crossplane is deleting.
func binding(engine, class string, deleting bool) *fnv1.Resource {
	meta := `"name": "` + engine + `-engineclass-fe6d3468", "namespace": "firebolt",
		"labels": {"firebolt.io/engine": "` + engine + `", "firebolt.io/engine-class-binding": "` + class + `"}`
	if deleting {
		meta += `, "deletionTimestamp": "2026-01-01T00:00:00Z"`
	}
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": {` + meta + `}, "data": {"engine": "` + engine + `", "engineClass": "` + class + `"}}`)}
}

// inUse is the class's Usage of its own claim.
func inUse(ready bool) *fnv1.Resource {
	r := fnv1.Ready_READY_FALSE
	if ready {
		r = fnv1.Ready_READY_TRUE
	}
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion": "protection.crossplane.io/v1beta1", "kind": "Usage",
		"metadata": {"name": "standard-engineclass-in-use", "namespace": "firebolt"},
		"spec": {"of": {"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngineClass", "resourceRef": {"name": "standard"}},
			"reason": "FireboltEngineClass \"standard\" has engines bound to it; its status.boundEngineNames lists them",
			"replayDeletion": false}}`), Ready: r}
}

// withInUse adds the Usage of the claim to a desired state.
func withInUse(s *fnv1.State, ready bool) *fnv1.State {
	s.Resources["in-use"] = inUse(ready)
	return s
}

// claim is the class's own claim at generation gen: its generation lags
// the composite's (4), which Crossplane's writes move on.
func claim(gen int, template string) *fnv1.Resource {
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "FireboltEngineClass",
		"metadata": {"name": "standard", "namespace": "firebolt", "generation": ` + strconv.Itoa(gen) + `},
		"spec": {"template": ` + template + `, "rollout": "recreate", "resourceRef": {"name": "standard-9d2kw"}}}`)}
}

func requirements() *fnv1.Requirements {
	ns := "firebolt"
	return &fnv1.Requirements{Resources: map[string]*fnv1.ResourceSelector{
		"bindings": {
			ApiVersion: "v1",
			Kind:       "ConfigMap",
			Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"firebolt.io/engine-class-binding": "standard"}}},
			Namespace:  &ns,
		},
		"claim": {
			ApiVersion: "compute.firebolt.io/v1alpha1",
			Kind:       "FireboltEngineClass",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: "standard"},
			Namespace:  &ns,
		},
	}}
}

// specConfigMap is the ConfigMap publishing data, the spec's own fields
// as JSON (none of Crossplane's).
func specConfigMap(data string, ready bool) *fnv1.Resource {
	r := fnv1.Ready_READY_FALSE
	if ready {
		r = fnv1.Ready_READY_TRUE
	}
	quoted, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": {"name": "standard-engineclass", "namespace": "firebolt", "labels": {"firebolt.io/engine-class": "standard"}},
		"data": {"spec": ` + string(quoted) + `}}`), Ready: r}
}

// desired is the desired state of a class whose status is stamped now.
func desired(observedGeneration int, bound []string, ready fnv1.Ready, cm *fnv1.Resource) *fnv1.State {
	return desiredAt(now, observedGeneration, bound, ready, cm)
}

// desiredAt is the desired state of a class whose lastReconciled is stamp.
func desiredAt(stamp string, observedGeneration int, bound []string, ready fnv1.Ready, cm *fnv1.Resource) *fnv1.State {
	names, err := json.Marshal(bound)
	if err != nil || bound == nil {
		names = []byte("[]")
	}
	s := &fnv1.State{Composite: &fnv1.Resource{
		Resource: resource.MustStructJSON(`{"status": {"observedGeneration": ` + strconv.Itoa(observedGeneration) + `, "boundEngines": ` + strconv.Itoa(len(bound)) +
			`, "boundEngineNames": ` + string(names) + `, "lastReconciled": "` + stamp + `"}}`),
		Ready: ready,
	}}
	if cm != nil {
		s.Resources = map[string]*fnv1.Resource{"spec-configmap": cm}
	}
	return s
}

func cond(status fnv1.Status, reason, message string) []*fnv1.Condition {
	return []*fnv1.Condition{{Type: "Admissible", Status: status, Reason: reason, Message: &message, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}}
}

func TestRunFunction(t *testing.T) {
	ttl := durationpb.New(30 * time.Minute) // the input's default stable TTL
	admissible := cond(fnv1.Status_STATUS_CONDITION_TRUE, "Admissible", "spec.template sets no operator-owned field")
	reason := "OperatorOwnedFieldSet"
	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		want   *fnv1.RunFunctionResponse
	}{
		"CountsEnginesByTheirBindings": {
			reason: "Engines whose binding to this class Crossplane lists by label count and are named, sorted; a binding being deleted (its engine moved away) and one labelled for another class do not. " +
				"The class publishes its spec in a ConfigMap, ready once observed, asks for the bindings by label, not for the namespace's engines, and, having engines, composes the Usage that refuses its claim's deletion.",
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(admissibleTemplate, "")},
					Resources: map[string]*fnv1.Resource{"spec-configmap": specConfigMap(admissibleData, false)}},
				RequiredResources: map[string]*fnv1.Resources{"bindings": {Items: []*fnv1.Resource{
					binding("reporting", "standard", false), binding("etl", "standard", false), binding("adhoc", "standard", true), binding("scratch", "large", false),
				}}, "claim": {Items: []*fnv1.Resource{claim(2, admissibleTemplate)}}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: ttl},
				Desired:      withInUse(desired(2, []string{"etl", "reporting"}, fnv1.Ready_READY_TRUE, specConfigMap(admissibleData, true)), false),
				Conditions:   admissible,
				Requirements: requirements(),
			},
		},
		"BreakerOpen": {
			reason: "Crossplane's circuit breaker drops the class's watch events (binding many engines at once opens it): an edit of the class would reach it only as a dropped event, and with an engine bound in this call its events are still coming, so it is called again in 5 s, not 30 m.",
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(admissibleTemplate,
					`{"observedGeneration": 2, "conditions": [{"type": "Responsive", "status": "False", "reason": "WatchCircuitOpen"}]}`)},
					Resources: map[string]*fnv1.Resource{"spec-configmap": specConfigMap(admissibleData, false)}},
				RequiredResources: map[string]*fnv1.Resources{"bindings": {Items: []*fnv1.Resource{binding("etl", "standard", false)}},
					"claim": {Items: []*fnv1.Resource{claim(2, admissibleTemplate)}}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(5 * time.Second)},
				Desired:      withInUse(desired(2, []string{"etl"}, fnv1.Ready_READY_TRUE, specConfigMap(admissibleData, true)), false),
				Conditions:   admissible,
				Requirements: requirements(),
			},
		},
		"NoBindings": {
			reason: "Crossplane found no binding: the count is 0 and the list empty, published, not omitted. The ConfigMap is not ready until Crossplane observes it. The Usage of the claim is left out, so Crossplane deletes it and the class can be deleted.",
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(admissibleTemplate, `{"boundEngines": 3, "boundEngineNames": ["a", "b", "c"]}`)},
					Resources: map[string]*fnv1.Resource{"in-use": inUse(false)}},
				RequiredResources: map[string]*fnv1.Resources{"bindings": {}, "claim": {Items: []*fnv1.Resource{claim(2, admissibleTemplate)}}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: ttl},
				Desired:      desired(2, nil, fnv1.Ready_READY_TRUE, specConfigMap(admissibleData, false)),
				Conditions:   admissible,
				Requirements: requirements(),
			},
		},
		"BindingsNotListedYet": {
			reason: "Before Crossplane has listed the bindings (or fetched the claim) the published count, names and observed generation stay instead of dropping to none, and so does the Usage of the claim.",
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(admissibleTemplate, `{"observedGeneration": 2, "boundEngines": 3, "boundEngineNames": ["a", "b", "c"]}`)},
					Resources: map[string]*fnv1.Resource{"in-use": inUse(false)}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: ttl},
				Desired:      withInUse(desired(2, []string{"a", "b", "c"}, fnv1.Ready_READY_TRUE, specConfigMap(admissibleData, false)), true),
				Conditions:   admissible,
				Requirements: requirements(),
			},
		},
		"TemplateRejected": {
			reason: "A template the schema lets through but the rules reject: Admissible False with every field path, not ready, one warning.",
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(rejectedTemplate, `{"observedGeneration": 2}`)}},
				RequiredResources: map[string]*fnv1.Resources{"bindings": {Items: []*fnv1.Resource{binding("etl", "standard", false)}},
					"claim": {Items: []*fnv1.Resource{claim(3, rejectedTemplate)}}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:       &fnv1.ResponseMeta{Ttl: ttl},
				Desired:    withInUse(desired(2, []string{"etl"}, fnv1.Ready_READY_FALSE, specConfigMap(rejectedData, false)), false),
				Conditions: cond(fnv1.Status_STATUS_CONDITION_FALSE, reason, rejectedMessage),
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_WARNING, Message: rejectedMessage, Reason: &reason,
					Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
				}},
				Requirements: requirements(),
			},
		},
		"SpecTooLarge": {
			reason: "A spec longer than the ConfigMap can hold: Admissible False saying so, not ready, one warning; the ConfigMap carries the reason instead of the spec, for the engines to report.",
			req: &fnv1.RunFunctionRequest{
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: xr(hugeTemplate, `{"observedGeneration": 2}`)}},
				RequiredResources: map[string]*fnv1.Resources{"bindings": {}, "claim": {Items: []*fnv1.Resource{claim(3, hugeTemplate)}}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: ttl},
				Desired: desired(2, nil, fnv1.Ready_READY_FALSE, &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "standard-engineclass", "namespace": "firebolt", "labels": {"firebolt.io/engine-class": "standard"}},
					"data": {"error": "` + tooLarge + `"}}`), Ready: fnv1.Ready_READY_FALSE}),
				Conditions: cond(fnv1.Status_STATUS_CONDITION_FALSE, "SpecNotPublished", tooLarge),
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_WARNING, Message: tooLarge, Reason: ptr("SpecNotPublished"),
					Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
				}},
				Requirements: requirements(),
			},
		},
		"TemplateStillRejected": {
			reason: "A rejection the composite already carries is not announced again.",
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(rejectedTemplate,
					`{"observedGeneration": 3, "conditions": [{"type": "Admissible", "status": "False", "reason": "OperatorOwnedFieldSet"}]}`)}},
				RequiredResources: map[string]*fnv1.Resources{"bindings": {}, "claim": {Items: []*fnv1.Resource{claim(3, rejectedTemplate)}}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: ttl},
				Desired:      desired(2, nil, fnv1.Ready_READY_FALSE, specConfigMap(rejectedData, false)),
				Conditions:   cond(fnv1.Status_STATUS_CONDITION_FALSE, reason, rejectedMessage),
				Requirements: requirements(),
			},
		},
		"ClaimEditNotSyncedYet": {
			reason: "The claim is at generation 3 with a template the composite does not hold yet: generation 2 stays published.",
			req: &fnv1.RunFunctionRequest{
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(admissibleTemplate, `{"observedGeneration": 2}`)}},
				RequiredResources: map[string]*fnv1.Resources{"bindings": {}, "claim": {Items: []*fnv1.Resource{
					claim(3, `{"spec": {"nodeSelector": {"pool": "other"}}}`),
				}}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: ttl},
				Desired:      desired(2, nil, fnv1.Ready_READY_TRUE, specConfigMap(admissibleData, false)),
				Conditions:   admissible,
				Requirements: requirements(),
			},
		},
		"ClaimGone": {
			reason: "Crossplane found no claim: there is no generation to vouch for.",
			req: &fnv1.RunFunctionRequest{
				Observed:          &fnv1.State{Composite: &fnv1.Resource{Resource: xr(admissibleTemplate, `{"observedGeneration": 2}`)}},
				RequiredResources: map[string]*fnv1.Resources{"bindings": {}, "claim": {}},
			},
			want: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: ttl},
				Desired:      desired(0, nil, fnv1.Ready_READY_TRUE, specConfigMap(admissibleData, false)),
				Conditions:   admissible,
				Requirements: requirements(),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			log := logging.NewNopLogger()
			f := fn.NewWithComposers(log, map[string]fn.Composer{v1alpha1.XFireboltEngineClassKind: composer()})
			rsp, err := f.RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRunFunctionWithoutClaim: engines name a class by its claim, so
// without claim labels nothing can be counted. Like every composer, the
// class keeps what it published (its status and the ConfigMap engines read
// its spec from) and says why in a condition, rather than failing the
// pipeline.
func TestRunFunctionWithoutClaim(t *testing.T) {
	log := logging.NewNopLogger()
	f := fn.NewWithComposers(log, map[string]fn.Composer{v1alpha1.XFireboltEngineClassKind: composer()})
	req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
		`{"apiVersion": "compute.firebolt.io/v1alpha1", "kind": "XFireboltEngineClass", "metadata": {"name": "standard-9d2kw"}, "spec": {"template": {}},
		"status": {"observedGeneration": 2, "boundEngines": 1, "boundEngineNames": ["a"]}}`)},
		Resources: map[string]*fnv1.Resource{"spec-configmap": specConfigMap(admissibleData, false)}}}
	rsp, err := f.RunFunction(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := &fnv1.RunFunctionResponse{
		Meta:       &fnv1.ResponseMeta{Ttl: durationpb.New(30 * time.Minute)},
		Desired:    desired(2, []string{"a"}, fnv1.Ready_READY_FALSE, specConfigMap(admissibleData, true)),
		Conditions: cond(fnv1.Status_STATUS_CONDITION_FALSE, "ClaimLabelsMissing", "composite standard-9d2kw has no crossplane.io/claim-name and crossplane.io/claim-namespace labels: create engine classes through a FireboltEngineClass claim"),
	}
	if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
		t.Errorf("a class without claim labels keeps its status and says why: -want, +got:\n%s", diff)
	}
}

// TestLastReconciled: the class stamps status.lastReconciled only when its
// status changes, since every status write is a watch event of the class,
// and while Crossplane's circuit breaker is open and the stamp is 5m old,
// since a class at rest causes no event and the breaker closes only on one:
// the stamp's own write is that event, and ends the 30 s poll.
func TestLastReconciled(t *testing.T) {
	at := func(d time.Duration) string { return clock().Add(-d).Format(time.RFC3339) }
	// rest is the status the class computes from one binding of etl, with
	// lastReconciled stamp and, when open, the breaker open; its Usage of
	// the claim exists.
	rest := func(stamp string, bound int, open bool) *fnv1.RunFunctionRequest {
		st := `{"observedGeneration": 2, "boundEngines": ` + strconv.Itoa(bound) + `, "boundEngineNames": ["etl"], "lastReconciled": "` + stamp + `"`
		if open {
			st += `, "conditions": [{"type": "Responsive", "status": "False", "reason": "WatchCircuitOpen"}]`
		}
		return &fnv1.RunFunctionRequest{
			Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr(admissibleTemplate, st+"}")},
				Resources: map[string]*fnv1.Resource{"spec-configmap": specConfigMap(admissibleData, false), "in-use": inUse(false)}},
			RequiredResources: map[string]*fnv1.Resources{"bindings": {Items: []*fnv1.Resource{binding("etl", "standard", false)}},
				"claim": {Items: []*fnv1.Resource{claim(2, admissibleTemplate)}}},
		}
	}
	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		stamp  string
		ttl    time.Duration
	}{
		"BreakerOpenAtRestFor5m": {
			reason: "The breaker is open and the status has not changed for 5m: the class stamps lastReconciled, whose write is the event that closes the breaker.",
			req:    rest(at(5*time.Minute), 1, true),
			stamp:  now,
			ttl:    30 * time.Second,
		},
		"BreakerOpenFreshStamp": {
			reason: "The breaker is open but the status changed less than 5m ago: the stamp stays, so the 30 s poll writes nothing.",
			req:    rest(at(5*time.Minute-time.Second), 1, true),
			stamp:  at(5*time.Minute - time.Second),
			ttl:    30 * time.Second,
		},
		"BreakerOpenStatusChanging": {
			reason: "The breaker is open and the status changed 59 s ago: engines are still binding, an edit may have been dropped among their events, so the class polls every 5 s.",
			req:    rest(at(time.Minute-time.Second), 1, true),
			stamp:  at(time.Minute - time.Second),
			ttl:    5 * time.Second,
		},
		"BreakerOpenStatusRested": {
			reason: "The breaker is open and the status has rested for a minute: the breaker lets an edit through itself, and the class polls every 30 s only as a backstop.",
			req:    rest(at(time.Minute), 1, true),
			stamp:  at(time.Minute),
			ttl:    30 * time.Second,
		},
		"BreakerClosedAtRest": {
			reason: "With the breaker closed nothing is stamped, however long the class rested.",
			req:    rest(at(time.Hour), 1, false),
			stamp:  at(time.Hour),
			ttl:    30 * time.Minute,
		},
		"StatusChanges": {
			reason: "An engine bound since the last write changes the status: it is stamped now.",
			req:    rest(at(time.Minute), 0, false),
			stamp:  now,
			ttl:    30 * time.Minute,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineClassKind: composer()})
			rsp, err := f.RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			want := &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(tc.ttl)},
				Desired:      withInUse(desiredAt(tc.stamp, 2, []string{"etl"}, fnv1.Ready_READY_TRUE, specConfigMap(admissibleData, true)), true),
				Conditions:   cond(fnv1.Status_STATUS_CONDITION_TRUE, "Admissible", "spec.template sets no operator-owned field"),
				Requirements: requirements(),
			}
			if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
