package engine_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// TestMemoryFlatInEngines: one function process serves every engine of
// every tenant, so what it keeps between calls must stop growing with
// their number. Distinct engines are created and then called at rest
// through RunFunction, as Crossplane calls them, and the live heap is
// read after the first batch and again after four times as many: past
// the memos' byte bounds (24 MiB in all) the second batch may add only
// the phase gauge's few hundred bytes per engine. With the routing memo
// bounded only by its 4,096 entries, they added 10.7 KB each.
func TestMemoryFlatInEngines(t *testing.T) {
	const (
		first = 1500 // enough to fill every memo to its byte bound
		more  = 2000 // engines added after the first reading
		// perEngine is what the function may keep per engine it has seen:
		// its series in the phase gauge (bounded at 10,000 engines).
		perEngine = 1 << 10
		slack     = 2 << 20
	)
	c := engine.New(engine.NewProber(nil), engine.NewEventLister(nil))
	f := fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})

	createAndRest := func(from, to int) {
		for i := from; i < to; i++ {
			restEngine(t, f, fmt.Sprintf("footprint-%05d", i))
		}
	}
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}

	createAndRest(0, first)
	h1 := live()
	rec, ren := engine.MemoWeights()
	t.Logf("memos after %d engines: recording %d bytes, render %d bytes", first, rec, ren)
	createAndRest(first, first+more)
	h2 := live()
	grew := int64(h2) - int64(h1)
	t.Logf("live heap after %d engines: %.1f MiB; after %d: %.1f MiB (%+d bytes, %+d per added engine)",
		first, float64(h1)/(1<<20), first+more, float64(h2)/(1<<20), grew, grew/more)
	if limit := int64(more*perEngine + slack); grew > limit {
		t.Errorf("%d more engines grew the function's live heap by %d bytes, more than %d (%d per engine plus %d): what it keeps grows with the number of engines",
			more, grew, limit, perEngine, slack)
	}
}

// restEngine drives a new engine named name, two replicas, through
// creation to rest on f, as the simulated control plane does, and calls
// it once more at rest: the calls that put an engine's rendering and
// recording in the memos.
func restEngine(t *testing.T, f *fn.Function, name string) {
	t.Helper()
	delay := 0
	s := newSimNamed(t, scripted{podDelay: &delay}, fixtureSpec("ghcr.io/firebolt-db/engine:4.29", 2), name, name+"-x7k2p", "uid-"+name)
	s.f = f
	for i := 0; s.Status().Phase != v1alpha1.EnginePhaseStable; i++ {
		if i > 20 {
			t.Fatalf("engine %s never stable: %v", name, s.history)
		}
		s.Step()
	}
	s.Step()
}
