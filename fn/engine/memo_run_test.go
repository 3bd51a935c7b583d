package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// TestConcurrentCallsGetTheirOwnAnswers runs requests that share the
// memos' slots (one engine name, generation and namespace, different
// replicas and phases) from many goroutines at once, and wants every
// response to be the one the same request gets alone, before any
// concurrent call.
func TestConcurrentCallsGetTheirOwnAnswers(t *testing.T) {
	newFn := func() *fn.Function {
		c := engine.New(engine.NewProber(nil), nil, engine.WithClock(func() time.Time { return responseClock }))
		return fn.NewWithComposers(logging.NewNopLogger(), map[string]fn.Composer{v1alpha1.XFireboltEngineKind: c})
	}
	reqs := []*fnv1.RunFunctionRequest{
		requestIn(t, 2, v1alpha1.EnginePhaseStable),
		requestIn(t, 3, v1alpha1.EnginePhaseStable),
		requestIn(t, 4, v1alpha1.EnginePhaseStable),
		requestIn(t, 3, v1alpha1.EnginePhaseDraining),
	}
	want := make([]*fnv1.RunFunctionResponse, len(reqs))
	for i, req := range reqs {
		rsp, err := newFn().RunFunction(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = rsp
	}

	f := newFn()
	const workers, callsEach = 8, 25
	var wg sync.WaitGroup
	diffs := make(chan string, workers*callsEach)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range callsEach {
				i := (w + c) % len(reqs)
				rsp, err := f.RunFunction(context.Background(), reqs[i])
				if err != nil {
					diffs <- err.Error()
					return
				}
				if d := cmp.Diff(want[i], rsp, protocmp.Transform()); d != "" {
					diffs <- d
					return
				}
			}
		}()
	}
	wg.Wait()
	close(diffs)
	for d := range diffs {
		t.Errorf("a concurrent call's response differs from the call alone, -want, +got:\n%s", d)
	}
}
