package engine_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/scrape"
)

// update is the -update flag the package's internal tests define.
func update() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// fixtureSpec is the engine the fixtures roll: two replicas of an image.
func fixtureSpec(image string, replicas int) map[string]any {
	return map[string]any{
		"instanceRef": simInstance, "replicas": float64(replicas), "storage": map[string]any{},
		"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "engine", "image": image},
		}}},
	}
}

// fixture is the state of the simulated cluster at one point of a rollout.
type fixture struct {
	name string
	req  *fnv1.RunFunctionRequest
	// hasObjects: composed resources existed when it was captured.
	hasObjects bool
	// Render fixture content, captured with the request.
	xr, observed, required []byte
}

// rollout drives one engine through a complete blue-green rollout and a
// stop, capturing the request Crossplane sends in each phase. The same run
// produces the whole-response test requests and the crossplane render
// fixtures, so both always hold a consistent state.
func rollout(t *testing.T) []fixture {
	delay := 0
	s := newSim(t, scripted{podDelay: &delay}, fixtureSpec("ghcr.io/firebolt-db/engine:4.29", 2))
	s.readyDelay = 10
	var out []fixture
	capture := func(name string) {
		out = append(out, fixture{name: name, req: s.Request(), hasObjects: len(s.objs) > 0, xr: s.renderXR(), observed: s.renderObserved(), required: s.renderRequired()})
	}
	until := func(what string, done func() bool) {
		t.Helper()
		for i := 0; !done(); i++ {
			if i == 20 {
				t.Fatalf("fixture rollout: never reached %s; history:\n%v", what, s.history)
			}
			s.Step()
		}
	}
	phase := func(p v1alpha1.EnginePhase) func() bool { return func() bool { return s.Status().Phase == p } }

	// Requirements are learnt on the first call; the fixture request for a
	// new engine carries them as Crossplane's tracker would.
	s.Step()
	s.xr.Object["status"] = nil
	delete(s.xr.Object, "status")
	capture("new")

	// The call that creates the first generation's objects and, with them,
	// the routing Service selecting it.
	until("generation 0 recorded", func() bool { return len(s.Status().Renderings) == 1 })
	capture("first-generation")

	until("stable", phase(v1alpha1.EnginePhaseStable))
	s.Step()
	capture("stable")

	s.SetSpec(fixtureSpec("ghcr.io/firebolt-db/engine:4.30", 2))
	delay = 3
	until("generation 1 created", func() bool { return s.Status().Phase == "creating" && s.objs["g1-statefulset"] != nil })
	capture("creating")

	until("switching", phase(v1alpha1.EnginePhaseSwitching))
	capture("switching")

	s.verdict = scrape.Verdict{Message: "pod demo-g0-0: 1 running, 0 suspended queries"}
	until("draining", phase(v1alpha1.EnginePhaseDraining))
	capture("draining")

	s.verdict = scrape.Verdict{Drained: true}
	until("cleaning", phase(v1alpha1.EnginePhaseCleaning))
	capture("cleaning")

	delay = 0
	s.SetSpec(fixtureSpec("ghcr.io/firebolt-db/engine:4.30", 0))
	until("stopped", func() bool {
		ok, _ := s.Converged()
		return ok && s.Status().Phase == v1alpha1.EnginePhaseStopped
	})
	s.Step()
	capture("stopped")

	// rollout: phased: three replicas (a new generation), then an image
	// change updated in place, captured once the first pod is let go.
	phased := func(image string) map[string]any {
		spec := fixtureSpec(image, 3)
		spec["rollout"] = "phased"
		return spec
	}
	s.SetSpec(phased("ghcr.io/firebolt-db/engine:4.30"))
	until("stable on three replicas", func() bool { ok, _ := s.Converged(); return ok })
	s.SetSpec(phased("ghcr.io/firebolt-db/engine:4.31"))
	delay = 2
	until("the first pod let go in place", func() bool { return s.podsLetGo == 1 })
	s.Step()
	capture("updating")

	// The instance enables authentication: the engine rolls a generation
	// that runs it (blue-green even under rollout: phased, since
	// config.yaml changes), captured once its objects exist, and publishes
	// its hash once at rest.
	delay = 0
	until("the in-place update done", func() bool { ok, _ := s.Converged(); return ok })
	s.SetInstanceAuth("7")
	delay = 2
	until("a generation running auth created", func() bool {
		st := s.Status()
		return st.Phase == v1alpha1.EnginePhaseCreating && s.objs[resource.Name("g"+strconv.Itoa(st.CurrentGeneration)+"-statefulset")] != nil
	})
	capture("creating-auth")
	until("stable on auth", func() bool {
		ok, _ := s.Converged()
		return ok && s.Status().Phase == v1alpha1.EnginePhaseStable && s.Status().ObservedAuthHash != ""
	})
	s.Step()
	capture("stable-auth")
	return out
}

// renderXR is the composite as a render fixture.
func (s *sim) renderXR() []byte {
	return toYAML(s.xr.Object)
}

// renderObserved is every composed resource as Crossplane observes it.
func (s *sim) renderObserved() []byte {
	names := make([]string, 0, len(s.objs))
	for n := range s.objs {
		names = append(names, string(n))
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString("---\n")
		b.Write(toYAML(s.observed(resource.Name(n), s.objs[resource.Name(n)])))
	}
	return b.Bytes()
}

// renderRequired is the engine's own claim, the instance and any pod the
// engine requires as required resources.
func (s *sim) renderRequired() []byte {
	var b bytes.Buffer
	objs := []*unstructured.Unstructured{s.claim, s.instance}
	names := make([]string, 0, len(s.reqs))
	for name := range s.reqs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch sel := s.reqs[name]; sel.GetKind() {
		case "Pod":
			if p := s.podObject(sel.GetMatchName()); p != nil {
				objs = append(objs, p)
			}
		case "Secret":
			if sec := s.secrets[sel.GetMatchName()]; sec != nil {
				objs = append(objs, sec)
			}
		}
	}
	for _, o := range objs {
		b.WriteString("---\n")
		b.Write(toYAML(o.Object))
	}
	return b.Bytes()
}

func toYAML(v any) []byte {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func requestYAML(t *testing.T, m proto.Message) []byte {
	t.Helper()
	j, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// golden compares got with a committed file, or writes it with -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if update() {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./fn/engine -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale (run go test ./fn/engine -run %s -update): -committed, +generated:\n%s", file, t.Name(), diff)
	}
}

// renderFixtureHeader marks generated render fixtures.
const renderFixtureHeader = "# Generated by go test ./fn/engine -run TestFixtures -update from a simulated\n# rollout (fn/engine/fixtures_test.go); edit the generator, not this file.\n"

// TestFixtures regenerates the whole-response test requests and the
// crossplane render fixtures from one simulated rollout and fails when the
// committed files differ, so they can never drift from what the function
// and Crossplane actually produce.
func TestFixtures(t *testing.T) {
	for _, f := range rollout(t) {
		t.Run(f.name, func(t *testing.T) {
			golden(t, filepath.Join("testdata", "requests", f.name+".yaml"), requestYAML(t, f.req))
			dir := filepath.Join("..", "..", "examples", "render", "engine-"+f.name)
			golden(t, filepath.Join(dir, "xr.yaml"), append([]byte(renderFixtureHeader), f.xr...))
			if f.hasObjects {
				golden(t, filepath.Join(dir, "observed.yaml"), append([]byte(renderFixtureHeader), f.observed...))
			}
			golden(t, filepath.Join(dir, "required.yaml"), append([]byte(renderFixtureHeader), f.required...))
		})
	}
}
