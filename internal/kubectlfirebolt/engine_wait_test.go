package kubectlfirebolt

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// engineAt is the claim demo at spec generation gen, resource version rv,
// with a status of phase, observedGeneration observed and conditions.
func engineAt(t *testing.T, rv string, gen int64, phase string, observed int64, conds ...string) *unstructured.Unstructured {
	t.Helper()
	y := fmt.Sprintf(`
apiVersion: compute.firebolt.io/v1alpha1
kind: FireboltEngine
metadata: {name: demo, namespace: firebolt, generation: %d, resourceVersion: %q}
spec: {instanceRef: demo, replicas: 3}
status:
  phase: %s
  observedGeneration: %d
  conditions: [%s]
`, gen, rv, phase, observed, joinConds(conds))
	return obj(t, y)
}

func joinConds(cs []string) string {
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += ", "
		}
		out += c
	}
	return out
}

const (
	readyTrue    = `{type: Ready, status: "True", reason: Available}`
	readyFalse   = `{type: Ready, status: "False", reason: Creating, message: "Unready resources: g1-statefulset"}`
	rolling      = `{type: EngineReady, status: "False", reason: Rolling, message: "Engine is rolling out generation 1"}`
	drainFailing = `{type: EngineReady, status: "False", reason: DrainCheckFailing, message: "drain check of generation 0 is failing: pod demo-g0-1: cannot scrape metrics: 500"}`
	podsNotReady = `{type: EngineReady, status: "False", reason: PodsNotReady, message: "generation 1 has 2 of 3 pod(s) ready"}`
	engineReady  = `{type: EngineReady, status: "True", reason: EngineReady, message: "serving traffic on generation 1"}`
)

func gone() *metav1.Status {
	st := kerrors.NewResourceExpired("too old resource version: 5 (9)").ErrStatus
	st.Code = 410
	return &st
}

// TestEngineWait: wait follows the claim through a watch, prints each
// phase once as it changes, ends when the spec is in effect, re-watches
// when a watch ends or its resource version expires, and fails with the
// last phase and the conditions that are not True on timeout or deletion.
func TestEngineWait(t *testing.T) {
	type step struct {
		// events go on the n-th watch; closed ends it after them.
		events []watch.Event
		closed bool
	}
	cases := map[string]struct {
		args  []string
		gets  func(t *testing.T) []*unstructured.Unstructured
		steps func(t *testing.T) []step
		want  result
		// rvs are the resource versions the watches start from.
		rvs []string
	}{
		"ThroughARollout": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 5, "creating", 4, readyFalse, rolling)}
			},
			steps: func(t *testing.T) []step {
				return []step{{events: []watch.Event{
					{Type: watch.Modified, Object: engineAt(t, "11", 5, "creating", 4, readyFalse, rolling)},
					{Type: watch.Modified, Object: engineAt(t, "12", 5, "switching", 4, readyFalse, rolling)},
					{Type: watch.Modified, Object: engineAt(t, "13", 5, "draining", 4, readyFalse, rolling)},
					{Type: watch.Modified, Object: engineAt(t, "14", 5, "cleaning", 4, readyFalse, rolling)},
					{Type: watch.Modified, Object: engineAt(t, "15", 5, "stable", 5, readyTrue, engineReady)},
				}}}
			},
			rvs: []string{"10"},
			want: result{Stdout: "" +
				"fireboltengine/demo: creating (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: switching (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: draining (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: cleaning (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: stable and Ready, generation 5 of the spec in effect\n"},
		},
		"AlreadyInEffect": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 5, "stable", 5, readyTrue, engineReady)}
			},
			want: result{Stdout: "fireboltengine/demo: stable and Ready, generation 5 of the spec in effect\n"},
		},
		"Stopped": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 2, "stopped", 2, readyFalse)}
			},
			want: result{Stdout: "fireboltengine/demo: stopped, generation 2 of the spec in effect\n"},
		},
		"StableNotReadyWaitsForReady": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 5, "stable", 5, readyFalse, podsNotReady)}
			},
			steps: func(t *testing.T) []step {
				return []step{{events: []watch.Event{{Type: watch.Modified, Object: engineAt(t, "11", 5, "stable", 5, readyTrue, engineReady)}}}}
			},
			rvs: []string{"10"},
			want: result{Stdout: "fireboltengine/demo: stable (spec generation 5, 5 in effect)\n" +
				"fireboltengine/demo: stable and Ready, generation 5 of the spec in effect\n"},
		},
		"StableOfAnOlderSpecWaits": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 6, "stable", 5, readyTrue, engineReady)}
			},
			steps: func(t *testing.T) []step {
				return []step{{events: []watch.Event{
					{Type: watch.Modified, Object: engineAt(t, "11", 6, "creating", 5, readyFalse, rolling)},
					{Type: watch.Modified, Object: engineAt(t, "12", 6, "stable", 6, readyTrue, engineReady)},
				}}}
			},
			rvs: []string{"10"},
			want: result{Stdout: "fireboltengine/demo: stable (spec generation 6, 5 in effect)\n" +
				"fireboltengine/demo: creating (spec generation 6, 5 in effect)\n" +
				"fireboltengine/demo: stable and Ready, generation 6 of the spec in effect\n"},
		},
		"RewatchesWhenTheWatchEnds": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{
					engineAt(t, "10", 5, "creating", 4, readyFalse, rolling),
					engineAt(t, "20", 5, "draining", 4, readyFalse, rolling),
				}
			},
			steps: func(t *testing.T) []step {
				return []step{
					{events: []watch.Event{{Type: watch.Modified, Object: engineAt(t, "12", 5, "switching", 4, readyFalse, rolling)}}, closed: true},
					{events: []watch.Event{{Type: watch.Modified, Object: engineAt(t, "21", 5, "stable", 5, readyTrue, engineReady)}}},
				}
			},
			rvs: []string{"10", "20"},
			want: result{Stdout: "" +
				"fireboltengine/demo: creating (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: switching (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: draining (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: stable and Ready, generation 5 of the spec in effect\n"},
		},
		"RewatchesWhenTheVersionIsGone": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{
					engineAt(t, "10", 5, "creating", 4, readyFalse, rolling),
					engineAt(t, "30", 5, "cleaning", 4, readyFalse, rolling),
				}
			},
			steps: func(t *testing.T) []step {
				return []step{
					{events: []watch.Event{{Type: watch.Error, Object: gone()}}},
					{events: []watch.Event{{Type: watch.Modified, Object: engineAt(t, "31", 5, "stable", 5, readyTrue, engineReady)}}},
				}
			},
			rvs: []string{"10", "30"},
			want: result{Stdout: "" +
				"fireboltengine/demo: creating (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: cleaning (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: stable and Ready, generation 5 of the spec in effect\n"},
		},
		"OtherWatchErrorEnds": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 5, "creating", 4, readyFalse, rolling)}
			},
			steps: func(*testing.T) []step {
				st := kerrors.NewInternalError(fmt.Errorf("etcd is sad")).ErrStatus
				return []step{{events: []watch.Event{{Type: watch.Error, Object: &st}}}}
			},
			rvs: []string{"10"},
			want: result{Code: 1, Stdout: "fireboltengine/demo: creating (spec generation 5, 4 in effect)\n",
				Stderr: "error: cannot watch fireboltengine \"demo\": Internal error occurred: etcd is sad\n"},
		},
		"TimesOut": {
			args: []string{"--timeout", "30ms"},
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 5, "draining", 4, readyFalse, drainFailing)}
			},
			steps: func(*testing.T) []step { return []step{{}} },
			rvs:   []string{"10"},
			want: result{Code: 1, Stdout: "fireboltengine/demo: draining (spec generation 5, 4 in effect)\n",
				Stderr: "error: timed out after 30ms waiting for fireboltengine/demo: last phase draining, spec generation 5, 4 in effect\n" +
					"  Ready=False Creating: Unready resources: g1-statefulset\n" +
					"  EngineReady=False DrainCheckFailing: drain check of generation 0 is failing: pod demo-g0-1: cannot scrape metrics: 500\n"},
		},
		"DeletedWhileWatching": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 5, "creating", 4, readyFalse, rolling)}
			},
			steps: func(t *testing.T) []step {
				return []step{{events: []watch.Event{
					{Type: watch.Modified, Object: engineAt(t, "11", 5, "draining", 4, readyFalse, rolling)},
					{Type: watch.Deleted, Object: engineAt(t, "12", 5, "draining", 4, readyFalse, rolling)},
				}}}
			},
			rvs: []string{"10"},
			want: result{Code: 1, Stdout: "fireboltengine/demo: creating (spec generation 5, 4 in effect)\n" +
				"fireboltengine/demo: draining (spec generation 5, 4 in effect)\n",
				Stderr: "error: fireboltengine/demo was deleted while waiting: last phase draining, spec generation 5, 4 in effect\n" +
					"  Ready=False Creating: Unready resources: g1-statefulset\n" +
					"  EngineReady=False Rolling: Engine is rolling out generation 1\n"},
		},
		"GoneWhenReadAgain": {
			gets: func(t *testing.T) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{engineAt(t, "10", 5, "creating", 4, readyFalse, rolling), nil}
			},
			steps: func(*testing.T) []step { return []step{{closed: true}} },
			rvs:   []string{"10"},
			want: result{Code: 1, Stdout: "fireboltengine/demo: creating (spec generation 5, 4 in effect)\n",
				Stderr: "error: fireboltengine/demo was deleted while waiting: last phase creating, spec generation 5, 4 in effect\n" +
					"  Ready=False Creating: Unready resources: g1-statefulset\n" +
					"  EngineReady=False Rolling: Engine is rolling out generation 1\n"},
		},
		"NotFound": {
			gets: func(*testing.T) []*unstructured.Unstructured { return []*unstructured.Unstructured{nil} },
			want: result{Code: 1, Stderr: "error: fireboltengine \"demo\" not found in namespace \"firebolt\"\n"},
		},
		"BadTimeout": {
			args: []string{"--timeout=-1m"},
			want: result{Code: 1, Stderr: "error: --timeout -1m0s: must be a positive duration such as 90s or 10m\n"},
		},
		"NoOutputFormat": {
			args: []string{"-o", "yaml"},
			want: result{Code: 1, Stderr: "error: -o yaml: engine wait prints table only\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, nil)
			if tc.gets != nil {
				f.gets(tc.gets(t)...)
			}
			var steps []step
			if tc.steps != nil {
				steps = tc.steps(t)
			}
			ws := make([]*watch.RaceFreeFakeWatcher, 0, len(steps))
			for _, s := range steps {
				w := watch.NewRaceFreeFake()
				for _, ev := range s.events {
					w.Action(ev.Type, ev.Object)
				}
				if s.closed {
					w.Stop()
				}
				ws = append(ws, w)
			}
			var watched *watches
			if len(ws) > 0 {
				watched = f.watches(ws...)
			}
			got := f.run(t, append([]string{"engine", "wait", "demo"}, tc.args...)...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if watched == nil {
				return
			}
			var rvs []string
			for _, o := range watched.opts {
				rvs = append(rvs, o.ResourceVersion)
				if o.FieldSelector != "metadata.name=demo" {
					t.Errorf("watch field selector %q, want metadata.name=demo", o.FieldSelector)
				}
				if o.TimeoutSeconds == nil || *o.TimeoutSeconds < 1 || *o.TimeoutSeconds > 300 {
					t.Errorf("watch timeout %v, want 1..300 seconds", o.TimeoutSeconds)
				}
			}
			if diff := cmp.Diff(tc.rvs, rvs); diff != "" {
				t.Errorf("watches from resource versions (-want +got):\n%s", diff)
			}
		})
	}
}
