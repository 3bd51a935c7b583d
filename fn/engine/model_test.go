package engine_test

import (
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

type rapidDraws struct{ t *rapid.T }

func (r rapidDraws) intn(lo, hi int, label string) int {
	return rapid.IntRange(lo, hi).Draw(r.t, label)
}

// drawSpec draws a claim spec: replicas, image, rollout policy, class
// reference, and, when invalid is allowed, a template the function must
// reject.
func drawSpec(d draws, allowInvalid bool) map[string]any {
	spec := map[string]any{"instanceRef": simInstance, "replicas": float64(d.intn(0, 3, "replicas")), "storage": map[string]any{}}
	if img := d.intn(0, 3, "image"); img > 0 {
		spec["template"] = map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "engine", "image": fmt.Sprintf("ghcr.io/firebolt-db/engine:v%d", img)},
		}}}
	}
	switch d.intn(0, 4, "policy") {
	case 0:
		spec["rollout"] = "recreate"
	case 1:
		spec["drainCheckEnabled"] = false
	case 2:
		spec["drainCheckInterval"] = "2s"
	}
	switch d.intn(0, 3, "class") {
	case 1:
		spec["engineClassRef"] = simClass
	case 2:
		if allowInvalid {
			spec["engineClassRef"] = "missing"
		}
	}
	if allowInvalid && d.intn(0, 6, "invalid template") == 0 {
		spec["template"] = map[string]any{"spec": map[string]any{"hostNetwork": true}}
	}
	return spec
}

func drawVerdict(d draws) scrape.Verdict {
	switch d.intn(0, 2, "verdict") {
	case 0:
		return scrape.Verdict{Drained: true}
	case 1:
		return scrape.Verdict{Message: "pod demo-g0-0: 1 running, 0 suspended queries"}
	}
	return scrape.Verdict{Failing: true, Message: "pod demo-g0-0: cannot scrape metrics: timeout"}
}

// TestModel runs the engine composer against the simulated Crossplane loop
// through random user edits, class and instance changes (a class whose
// spec is not published among them), drain verdicts,
// pod delays and crashes, checking the invariants after every step (see
// sim.check and sim.apply), then lets the environment go quiet and checks
// that every run converges to the terminal phase of its spec.
func TestModel(t *testing.T) {
	steps := 0
	rapid.Check(t, func(rt *rapid.T) {
		d := rapidDraws{rt}
		s := newSim(rt, d, drawSpec(d, false))
		s.readyDelay = 3
		s.Crash = true

		chaos := d.intn(1, 80, "chaos steps")
		for range chaos {
			switch d.intn(0, 8, "event") {
			case 0:
				s.SetSpec(drawSpec(d, true))
			case 1:
				s.SetClass(simClass, []string{"", "a", "b"}[d.intn(0, 2, "class zone")])
			case 2:
				s.SetInstance(d.intn(0, 2, "instance ready") > 0)
			case 3:
				s.verdict = drawVerdict(d)
			case 4:
				// The class exists but its ConfigMap is not composed (yet,
				// or again): the engine waits and drops nothing.
				s.UnpublishClass(simClass)
			}
			s.Step()
		}

		// Quiet: the user fixes the spec, the class and instance exist,
		// pods come up, old generations drain, nothing crashes.
		s.SetSpec(drawSpec(d, false))
		s.SetClass(simClass, "a")
		s.SetInstance(true)
		s.verdict = scrape.Verdict{Drained: true}
		s.Crash = false
		// Converged: the terminal phase of the spec, serving a generation
		// of the spec, and a fixed point: another call changes nothing.
		const bound = 30
		converged, why := false, ""
		for i := 0; i < bound && !converged; i++ {
			before := s.Status()
			s.Step()
			converged, why = s.Converged()
			if converged && !reflect.DeepEqual(before, s.Status()) {
				converged, why = false, "status still changing"
			}
		}
		if !converged {
			s.fail("not converged within %d quiet steps: %s", bound, why)
		}
		steps += s.step
	})
	t.Logf("simulated %d reconcile steps", steps)
}
