package kubectlfirebolt

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// hostile retitles the terminal, clears it and returns to the start of the
// line to overwrite what was printed, if a terminal obeys it.
const hostile = "\x1b]0;owned\x07\x1b[2J\rReady True"

// TestTerminalEscapes: whatever others wrote (a condition's message, a
// phased-rollout check, a pod's scrape error, an error from the API) reaches
// the terminal with ESC and CR escaped, in every format and on stderr.
func TestTerminalEscapes(t *testing.T) {
	claim := func(t *testing.T) *unstructured.Unstructured {
		u := statusEngine(t, "", "replicas: 3", `
  phase: draining
  observedGeneration: 3
  currentGeneration: 1
  activeGeneration: 1
  drainingGeneration: 0
  phasedRollout: {phase: Rolling, updateRevision: r2, rollingPodStatus: {partition: 1, status: Failed, lastCheckMessage: placeholder}}
  conditions:
  - {type: EngineReady, status: "False", reason: DrainCheckFailing, message: placeholder}
`)
		if err := unstructured.SetNestedField(u.Object, hostile, "status", "phasedRollout", "rollingPodStatus", "lastCheckMessage"); err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		conds[0].(map[string]any)["message"] = hostile
		if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		return u
	}
	cases := map[string][]string{
		"StatusTable": {"engine", "status", "demo"},
		"StatusJSON":  {"engine", "status", "demo", "-o", "json"},
		"StatusYAML":  {"engine", "status", "demo", "-o", "yaml"},
		"ListYAML":    {"engine", "list", "-o", "yaml"},
		"WaitTimeout": {"engine", "wait", "demo", "--timeout", "30ms"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, []*unstructured.Unstructured{claim(t)}, append(enginePods(1, 3, 3), enginePods(0, 2, 2)...)...)
			f.scraper = &fakeScraper{obs: scrape.Observation{Pods: []scrape.PodResult{{Pod: "demo-g0-0", Err: errors.New(hostile)}}}}
			got := f.run(t, args...)
			all := got.Stdout + got.Stderr
			if strings.ContainsAny(all, "\x1b\r") {
				t.Errorf("ESC or CR reached the terminal:\n%q", all)
			}
			if !strings.Contains(all, "owned") {
				t.Errorf("the message was not printed at all:\n%q", all)
			}
		})
	}
}
