package kubectlfirebolt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/reasons"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// TestLabels: the labels status selects pods by are the function's.
func TestLabels(t *testing.T) {
	if labelGeneration != engine.LabelGeneration {
		t.Errorf("labelGeneration = %q, the function labels generations %q", labelGeneration, engine.LabelGeneration)
	}
}

// fakeScraper answers every drain check with obs and records the
// selectors it was asked for.
type fakeScraper struct {
	mu        sync.Mutex
	obs       scrape.Observation
	selectors []string
}

func (f *fakeScraper) Observe(_ context.Context, ns string, sel labels.Selector) scrape.Observation {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.selectors = append(f.selectors, ns+"/"+sel.String())
	return f.obs
}

// enginePods are the pods of generation gen of engine demo: ready of
// them Ready, the rest not.
func enginePods(gen, n, ready int) []runtime.Object {
	out := make([]runtime.Object, 0, n+1)
	for i := range n {
		p := pod(fmt.Sprintf("demo-g%d-%d", gen, i), map[string]string{"firebolt.io/engine": "demo", "firebolt.io/generation": fmt.Sprint(gen)})
		if i >= ready {
			notReady(p)
		}
		out = append(out, p)
	}
	out = append(out, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("demo-g%d", gen), Namespace: testNamespace},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(int32(n))},
	})
	return out
}

func statusEngine(t *testing.T, annotations, spec, status string) *unstructured.Unstructured {
	t.Helper()
	return obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt, generation: 4, annotations: {`+annotations+`}}
spec: {instanceRef: demo, `+spec+`}
status:
`+status)
}

const (
	synced       = `  - {type: Synced, status: "True", reason: ReconcileSuccess}`
	instanceOK   = `  - {type: InstanceReady, status: "True", reason: InstanceReady, message: FireboltInstance firebolt/demo is ready}`
	notReadyYet  = `  - {type: Ready, status: "False", reason: Creating, message: "Unready resources: g1-statefulset"}`
	readyCond    = `  - {type: Ready, status: "True", reason: Available}`
	rollingCond  = `  - {type: EngineReady, status: "False", reason: Rolling, message: Engine is rolling out generation 1}`
	busyObserved = "pod demo-g0-0: 5 running, 1 suspended queries"
)

// TestEngineStatus: engine status of an engine in each state a person
// asks about, every output format, each non-ready reason with the
// catalogue's advice; the whole output against golden files.
func TestEngineStatus(t *testing.T) {
	busy := scrape.Observation{Pods: []scrape.PodResult{{Pod: "demo-g0-0", Running: 5, Suspended: 1}, {Pod: "demo-g0-1"}}}
	failing := scrape.Observation{Pods: []scrape.PodResult{{Pod: "demo-g0-0", Err: errors.New("cannot scrape metrics: server returned HTTP status 500")}, {Pod: "demo-g0-1"}}}
	heldDrain := func(t *testing.T) *unstructured.Unstructured {
		return statusEngine(t, "", "replicas: 3", `
  phase: draining
  observedGeneration: 3
  currentGeneration: 1
  activeGeneration: 1
  drainingGeneration: 0
  conditions:
`+notReadyYet+"\n"+synced+"\n"+rollingCond+"\n"+instanceOK+"\n")
	}
	cases := map[string]struct {
		claim func(t *testing.T) *unstructured.Unstructured
		pods  []runtime.Object
		obs   *scrape.Observation
		args  []string
		// scraped are the selectors the live drain check asked for.
		scraped []string
	}{
		"Ready": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "engineClassRef: standard, replicas: 2", `
  phase: stable
  observedGeneration: 4
  currentGeneration: 1
  activeGeneration: 1
  conditions:
`+readyCond+"\n"+synced+`
  - {type: EngineReady, status: "True", reason: EngineReady, message: serving traffic on generation 1}
`+instanceOK+"\n")
			},
			pods: enginePods(1, 2, 2),
		},
		"HeldDrain":         {claim: heldDrain, pods: append(enginePods(1, 3, 3), enginePods(0, 2, 2)...), obs: &busy, scraped: []string{"firebolt/firebolt.io/engine=demo,firebolt.io/generation=0"}},
		"HeldDrainJSON":     {claim: heldDrain, pods: append(enginePods(1, 3, 3), enginePods(0, 2, 2)...), obs: &busy, args: []string{"-o", "json"}, scraped: []string{"firebolt/firebolt.io/engine=demo,firebolt.io/generation=0"}},
		"HeldDrainYAML":     {claim: heldDrain, pods: append(enginePods(1, 3, 3), enginePods(0, 2, 2)...), obs: &busy, args: []string{"-o", "yaml"}, scraped: []string{"firebolt/firebolt.io/engine=demo,firebolt.io/generation=0"}},
		"HeldDrainNoScrape": {claim: heldDrain, pods: append(enginePods(1, 3, 3), enginePods(0, 2, 2)...)},
		"DrainCheckFailing": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "replicas: 3", `
  phase: draining
  observedGeneration: 3
  currentGeneration: 1
  activeGeneration: 1
  drainingGeneration: 0
  conditions:
`+notReadyYet+"\n"+synced+`
  - {type: EngineReady, status: "False", reason: DrainCheckFailing, message: "drain check of generation 0 is failing: pod demo-g0-0: cannot scrape metrics: server returned HTTP status 500"}
`+instanceOK+"\n")
			},
			pods:    append(enginePods(1, 3, 3), enginePods(0, 2, 2)...),
			obs:     &failing,
			scraped: []string{"firebolt/firebolt.io/engine=demo,firebolt.io/generation=0"},
		},
		"Cleaning": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "replicas: 3", `
  phase: cleaning
  observedGeneration: 3
  currentGeneration: 1
  activeGeneration: 1
  drainingGeneration: 0
  conditions:
`+notReadyYet+"\n"+rollingCond+"\n")
			},
			pods: append(enginePods(1, 3, 3), enginePods(0, 2, 0)...),
			obs:  &busy,
		},
		"CreatingStuckOnAWarning": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "replicas: 3", `
  phase: creating
  observedGeneration: 3
  currentGeneration: 2
  activeGeneration: 1
  conditions:
`+notReadyYet+"\n"+synced+`
  - {type: EngineReady, status: "False", reason: FailedCreate, message: "StatefulSet demo-g2: create Pod demo-g2-1 in StatefulSet demo-g2 failed error: pods \"demo-g2-1\" is forbidden: exceeded quota (x4)"}
`+instanceOK+"\n")
			},
			pods: append(enginePods(2, 3, 1), enginePods(1, 2, 2)...),
		},
		"PodsNotReady": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "replicas: 3", `
  phase: stable
  observedGeneration: 4
  currentGeneration: 1
  activeGeneration: 1
  conditions:
  - {type: Ready, status: "False", reason: Unavailable}
`+synced+`
  - {type: EngineReady, status: "False", reason: PodsNotReady, message: "generation 1 has 2 of 3 pod(s) ready"}
`+instanceOK+"\n")
			},
			pods: enginePods(1, 3, 2),
		},
		"InstanceNotReady": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "replicas: 1", `
  phase: stable
  observedGeneration: 3
  currentGeneration: 0
  activeGeneration: 0
  conditions:
  - {type: Ready, status: "False", reason: Unavailable}
`+synced+`
  - {type: EngineReady, status: "False", reason: InstanceNotReady, message: "FireboltInstance firebolt/demo is not ready: MetadataReady is False"}
  - {type: InstanceReady, status: "False", reason: InstanceNotReady, message: "FireboltInstance firebolt/demo is not ready: MetadataReady is False"}
`)
			},
			pods: enginePods(0, 1, 1),
		},
		"ClassNotFound": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "engineClassRef: large, replicas: 1", `
  phase: stable
  observedGeneration: 3
  currentGeneration: 0
  activeGeneration: 0
  conditions:
  - {type: Ready, status: "False", reason: Unavailable}
`+synced+`
  - {type: EngineReady, status: "False", reason: FireboltEngineClassNotFound, message: "FireboltEngineClass firebolt/large not found"}
`+instanceOK+"\n")
			},
			pods: enginePods(0, 1, 1),
		},
		"AutoStopped": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, `firebolt.io/wake-requested: "2026-03-01T10:00:00Z"`, "replicas: 2, autoStop: {enabled: true, activeReplicas: 2}", `
  phase: stopped
  observedGeneration: 4
  currentGeneration: 3
  activeGeneration: 3
  autoStop: {replicas: 0, reason: Idle, lastActivityTime: "2026-03-01T11:00:00Z", lastScaledAt: "2026-03-01T11:30:00Z"}
  conditions:
  - {type: Ready, status: "False", reason: Unavailable}
`+synced+`
  - {type: EngineReady, status: "False", reason: AutoStopped, message: "Engine is stopped by auto-stop (Idle); a query through the gateway, or the firebolt.io/wake-requested annotation on the claim, wakes it"}
`+instanceOK+`
  - {type: AutoStop, status: "True", reason: Idle, message: the engine was idle for idleTimeout}
`)
			},
			pods: enginePods(3, 0, 0),
		},
		"PhasedRolloutCheckFailing": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "replicas: 3, rollout: phased", `
  phase: updating
  observedGeneration: 3
  currentGeneration: 1
  activeGeneration: 1
  phasedRollout:
    phase: rolling
    updateRevision: demo-g1-6b8f9c
    rolloutStartTime: "2026-03-01T11:00:00Z"
    rollingPodStatus: {status: prometheusError, partition: 1, consecutiveSuccessfulChecks: 0, consecutiveFailedChecks: 2, totalFailedChecks: 3, lastCheckMessage: "query returned no data"}
  conditions:
`+notReadyYet+"\n"+synced+`
  - {type: EngineReady, status: "False", reason: Rolling, message: "Engine is updating generation 1 in place, one pod at a time"}
`+instanceOK+`
  - {type: PhasedRollout, status: "False", reason: CheckError, message: "partition 1: the check failed 2 times in a row: query returned no data"}
`)
			},
			pods: enginePods(1, 3, 3),
		},
		"AnalysisFailing": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "replicas: 2", `
  phase: creating
  observedGeneration: 3
  currentGeneration: 2
  activeGeneration: 1
  analysis: {generation: 2, status: waitForChecks, passed: false, consecutiveSuccessfulChecks: 0, consecutiveFailedChecks: 3, totalFailedChecks: 3, lastCheckMessage: "query returned no data"}
  conditions:
`+notReadyYet+"\n"+synced+`
  - {type: EngineReady, status: "False", reason: Rolling, message: Engine is rolling out generation 2}
`+instanceOK+`
  - {type: Analysis, status: "False", reason: AnalysisFailing, message: "generation 2: 3 checks failed in a row: query returned no data"}
`)
			},
			pods: append(enginePods(2, 2, 2), enginePods(1, 2, 2)...),
		},
		"NotSynced": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return statusEngine(t, "", "replicas: 1", `
  phase: stable
  observedGeneration: 3
  currentGeneration: 0
  activeGeneration: 0
  conditions:
  - {type: Ready, status: "True", reason: Available}
  - {type: Synced, status: "False", reason: ReconcileError, message: "cannot compose resources: cannot run Composition pipeline step \"firebolt\": connection refused"}
  - {type: EngineReady, status: "True", reason: EngineReady, message: serving traffic on generation 0}
`)
			},
			pods: enginePods(0, 1, 1),
		},
		"NeverReconciled": {
			claim: func(t *testing.T) *unstructured.Unstructured {
				return obj(t, `
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt, generation: 1}
spec: {instanceRef: demo, replicas: 1}
`)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, []*unstructured.Unstructured{tc.claim(t)}, tc.pods...)
			sc := &fakeScraper{}
			if tc.obs != nil {
				sc.obs = *tc.obs
				f.scraper = sc
			}
			got := f.run(t, append([]string{"engine", "status", "demo"}, tc.args...)...)
			if got.Code != 0 || got.Stderr != "" {
				t.Fatalf("exit %d, stderr %q", got.Code, got.Stderr)
			}
			ext := ".txt"
			switch {
			case strings.Contains(name, "JSON"):
				ext = ".json"
			case strings.Contains(name, "YAML"):
				ext = ".yaml"
			}
			golden(t, "status/"+name+ext, got.Stdout)
			if diff := cmp.Diff(tc.scraped, sc.selectors); diff != "" {
				t.Errorf("live drain checks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEngineStatusErrors: not found, and formats status does not print.
func TestEngineStatusErrors(t *testing.T) {
	cases := map[string]struct {
		args []string
		want result
	}{
		"NotFound": {[]string{"engine", "status", "nope"}, result{Code: 1, Stderr: "error: fireboltengine \"nope\" not found in namespace \"firebolt\"\n"}},
		"Name":     {[]string{"engine", "status", "adhoc", "-o", "name"}, result{Code: 1, Stderr: "error: -o name: engine status prints table, json, yaml only\n"}},
		"NoName":   {[]string{"engine", "status"}, result{Code: 1, Stderr: "error: expected \"<name>\"\n"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := newFakeCluster(t, engines(t)).run(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestConditionAdvice: every non-True condition gets the catalogue's
// meaning and action, a Warning event's reason on EngineReady the
// StatefulSetWarning entry's, and Crossplane's Synced advice of its own.
func TestConditionAdvice(t *testing.T) {
	entry := func(typ, reason string) reasons.Entry {
		e, ok := reasons.Lookup(typ, reason)
		if !ok {
			t.Fatalf("the catalogue has no %s/%s", typ, reason)
		}
		return e
	}
	drain, warning, idle := entry("EngineReady", "DrainCheckFailing"), entry("EngineReady", "StatefulSetWarning"), entry("AutoStop", "Disabled")
	got := conditionReports(conditions{
		{Type: "Ready", Status: "False", Reason: "Creating"},
		{Type: "Synced", Status: "False", Reason: "ReconcileError", Message: "boom"},
		{Type: "EngineReady", Status: "False", Reason: "DrainCheckFailing", Message: "m"},
		{Type: "EngineReady", Status: "False", Reason: "FailedCreate"},
		{Type: "AutoStop", Status: "False", Reason: "Disabled"},
		{Type: "InstanceReady", Status: "True", Reason: "InstanceReady"},
		{Type: "Custom", Status: "False", Reason: "Whatever"},
	})
	want := []ConditionReport{
		{Type: "Ready", Status: "False", Reason: "Creating"},
		{Type: "Synced", Status: "False", Reason: "ReconcileError", Message: "boom", Meaning: syncedAdvice.Meaning, Action: syncedAdvice.Action},
		{Type: "EngineReady", Status: "False", Reason: "DrainCheckFailing", Message: "m", Meaning: drain.Meaning, Action: drain.Action},
		{Type: "EngineReady", Status: "False", Reason: "FailedCreate", Meaning: warning.Meaning, Action: warning.Action},
		{Type: "AutoStop", Status: "False", Reason: "Disabled", Meaning: idle.Meaning, Action: idle.Action},
		{Type: "InstanceReady", Status: "True", Reason: "InstanceReady"},
		{Type: "Custom", Status: "False", Reason: "Whatever"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
