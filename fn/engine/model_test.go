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
	switch d.intn(0, 6, "policy") {
	case 0:
		spec["rollout"] = "recreate"
	case 1:
		spec["drainCheckEnabled"] = false
	case 2:
		spec["drainCheckInterval"] = "2s"
	case 3, 4:
		spec["rollout"] = "phased"
	case 5:
		spec["rollout"], spec["drainCheckEnabled"] = "phased", false
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
	steps, letGo := 0, 0
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
		s.converge(30)
		steps += s.step
		letGo += s.podsLetGo
	})
	t.Logf("simulated %d reconcile steps; in-place steps let %d pods go", steps, letGo)
}

// drawPhasedSpec draws a spec under rollout: phased whose edits are mostly
// of the pod template (the image), sometimes of replicas, with the drain
// gate on or off, and now and then standardRollingUpdate.
func drawPhasedSpec(d draws) map[string]any {
	spec := map[string]any{"instanceRef": simInstance, "replicas": float64(3), "storage": map[string]any{}, "rollout": "phased"}
	if d.intn(0, 5, "topology change") == 0 {
		spec["replicas"] = float64(d.intn(1, 4, "replicas"))
	}
	spec["template"] = map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "engine", "image": fmt.Sprintf("ghcr.io/firebolt-db/engine:v%d", d.intn(1, 4, "image"))},
	}}}
	if d.intn(0, 3, "drain gate off") == 0 {
		spec["drainCheckEnabled"] = false
	}
	if d.intn(0, 5, "standard rolling update") == 0 {
		spec["standardRollingUpdate"] = true
	}
	return spec
}

// TestModelPhased is TestModel for engines under rollout: phased: random
// template and replica edits (mid-update among them), drain verdicts,
// pod delays and crashes. Besides sim.check's invariants, every apply of
// the serving StatefulSet lets at most one pod go, only once it was seen
// drained and its peers ready (sim.applyInPlace), and a run converges
// with every pod on the latest template.
func TestModelPhased(t *testing.T) {
	steps, letGo := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		d := rapidDraws{rt}
		s := newSim(rt, d, drawPhasedSpec(d))
		s.readyDelay = 2
		s.Crash = true
		for range d.intn(1, 60, "chaos steps") {
			switch d.intn(0, 5, "event") {
			case 0, 1:
				s.SetSpec(drawPhasedSpec(d))
			case 2:
				s.verdict = drawVerdict(d)
			}
			s.Step()
		}
		s.SetSpec(drawPhasedSpec(d))
		s.verdict = scrape.Verdict{Drained: true}
		s.Crash = false
		s.converge(40)
		steps += s.step
		letGo += s.podsLetGo
	})
	t.Logf("simulated %d reconcile steps; in-place steps let %d pods go", steps, letGo)
	if letGo == 0 {
		t.Errorf("no run let a pod go in place: the model does not exercise rollout: phased")
	}
}

// converge steps a quiet simulation until it has converged: the terminal
// phase of the spec, serving a generation of the spec, and a fixed point
// (another call changes nothing), within bound steps.
func (s *sim) converge(bound int) {
	s.t.Helper()
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
}
