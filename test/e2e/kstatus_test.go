package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// Scenario 10: what GitOps tools read. kstatus (Flux's health checks,
// kubectl wait, cli-utils appliers) compares a claim's
// status.observedGeneration with its metadata.generation. Every claim kind
// reads Current once its spec is in effect; an engine reads InProgress for
// the whole of a blue-green rollout and Current again once the old
// generation is gone; a write that moves only the composite's generation
// changes nothing.
func TestKstatusFollowsTheRollout(t *testing.T) {
	s := newScenario(t, "s10-kstatus")
	inst := s.instance("demo")
	s.apply(inst)
	class := s.example("engineclass.yaml", "standard")
	s.apply(class)
	s.waitInstanceReady(inst)
	s.waitCurrent(inst)
	s.waitCurrent(class)

	eng := s.engine("demo", "demo", "", 2)
	s.apply(eng)
	st := s.waitStable(eng, -1)
	s.waitCurrent(eng)
	xr := s.compositeName(eng)

	// Every read of the claim from here on must tell the truth.
	rec := s.recordClaim(eng)

	// Crossplane copies the rollout's last conditions onto the claim a
	// moment after the composite's, from its cache: wait until the claim
	// has read Current over three function calls, so that what follows
	// observes the bump and not the end of the rollout.
	s.waitSettledCurrent(eng, xr)

	// A composite-only generation bump: a spec field of the composite that
	// no claim sets. Crossplane's own reference writes do the same.
	claimGen := s.claimGeneration(eng)
	xrGen := s.compositeGeneration(eng)
	ri, err := cp.Resource(schema.GroupVersionKind{Group: harness.Group, Version: "v1alpha1", Kind: "XFireboltEngine"}, "")
	s.must(err)
	patch := fmt.Sprintf(`{"spec":{"writeConnectionSecretToRef":{"name":"demo-connection","namespace":%q}}}`, s.ns)
	_, err = ri.Patch(s.ctx, xr, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	s.must(err)
	s.wait(rolloutTimeout, "the composite's generation to move", func(context.Context) (bool, string, error) {
		g := s.compositeGeneration(eng)
		return g > xrGen, fmt.Sprintf("composite generation %d (was %d)", g, xrGen), nil
	})
	calls := s.functionCalls(xr)
	s.consistently(rolloutTimeout, "the claim Current at its own generation after a composite-only bump", func() (bool, string) {
		r, u := s.kstatus(eng)
		return r.Status == status.CurrentStatus && u.GetGeneration() == claimGen, r.Message
	}, s.callsSince(xr, calls, 3))

	// A blue-green rollout: InProgress from the edit until the old
	// generation is gone, Current again after.
	old := st.Active
	s.apply(withHold(t, s.engine("demo", "demo", "", 3)))
	s.wait(rolloutTimeout, "the claim InProgress after the edit", func(context.Context) (bool, string, error) {
		r, u := s.kstatus(eng)
		return r.Status == status.InProgressStatus && u.GetGeneration() > claimGen, r.Message, nil
	})
	st = s.waitEngine(eng, rolloutTimeout, "creating a new generation", func(e engineState) bool {
		return e.Phase == "creating" && e.Current > old
	})
	calls = s.functionCalls(xr)
	s.consistently(rolloutTimeout, "the claim InProgress while the new pods are held", func() (bool, string) {
		r, _ := s.kstatus(eng)
		return r.Status == status.InProgressStatus, r.Message
	}, func() bool { return s.functionCalls(xr) >= calls+3 })
	s.release("demo", st.Current, 3)
	s.waitStable(eng, old)
	s.waitCurrent(eng)
	rec.check(s)
}

// kstatus computes, with cli-utils itself, what Flux and kubectl wait read
// of the object u names; an unreadable object is Unknown.
func (s *scenario) kstatus(u *unstructured.Unstructured) (*status.Result, *unstructured.Unstructured) {
	got, err := s.get(u)
	if err != nil || got == nil {
		return &status.Result{Status: status.UnknownStatus, Message: fmt.Sprintf("cannot read: %v", err)}, &unstructured.Unstructured{}
	}
	r, err := status.Compute(got)
	if err != nil {
		return &status.Result{Status: status.UnknownStatus, Message: err.Error()}, got
	}
	return r, got
}

// waitSettledCurrent waits until kstatus has read the claim Current, at its
// own generation, on every poll across three function calls for composite
// xr; a poll that reads anything else starts the count again.
func (s *scenario) waitSettledCurrent(u *unstructured.Unstructured, xr string) {
	s.t.Helper()
	since := s.functionCalls(xr)
	enough := s.callsSince(xr, since, 3)
	s.wait(rolloutTimeout, u.GetKind()+" "+u.GetName()+" Current over three function calls", func(context.Context) (bool, string, error) {
		r, got := s.kstatus(u)
		obs, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
		if r.Status != status.CurrentStatus || obs != got.GetGeneration() {
			since = s.functionCalls(xr)
			enough = s.callsSince(xr, since, 3)
			return false, fmt.Sprintf("%s: %s (generation %d, observedGeneration %d)", r.Status, r.Message, got.GetGeneration(), obs), nil
		}
		return enough(), "Current", nil
	})
}

// waitCurrent waits until kstatus reads the claim as Current, with its
// status.observedGeneration equal to its own generation.
func (s *scenario) waitCurrent(u *unstructured.Unstructured) {
	s.t.Helper()
	s.wait(rolloutTimeout, u.GetKind()+" "+u.GetName()+" Current", func(context.Context) (bool, string, error) {
		r, got := s.kstatus(u)
		obs, found, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
		msg := fmt.Sprintf("%s: %s (generation %d, observedGeneration %d, present %t)", r.Status, r.Message, got.GetGeneration(), obs, found)
		return r.Status == status.CurrentStatus && found && obs == got.GetGeneration(), msg, nil
	})
}

func (s *scenario) claimGeneration(u *unstructured.Unstructured) int64 {
	s.t.Helper()
	got, err := s.get(u)
	if err != nil || got == nil {
		s.t.Fatalf("cannot read %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return got.GetGeneration()
}

func (s *scenario) compositeGeneration(claim *unstructured.Unstructured) int64 {
	x, err := s.composite(claim)
	if err != nil {
		return 0
	}
	return x.GetGeneration()
}

// claimRecorder reads an engine claim every 100ms and keeps every read
// where status.observedGeneration says more than is true: above the claim's
// generation, or equal to it while a rollout is under way.
type claimRecorder struct {
	mu         sync.Mutex
	reads      int
	violations []string
	stop       context.CancelFunc
	done       sync.WaitGroup
}

func (s *scenario) recordClaim(eng *unstructured.Unstructured) *claimRecorder {
	ctx, cancel := context.WithCancel(s.ctx)
	r := &claimRecorder{stop: cancel}
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			u, err := cp.Get(ctx, eng)
			if err != nil {
				continue
			}
			r.observe(u)
		}
	}()
	s.t.Cleanup(func() { cancel(); r.done.Wait() })
	return r
}

func (r *claimRecorder) observe(u *unstructured.Unstructured) {
	gen := u.GetGeneration()
	obs, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	e := readEngine(u)
	_, draining, _ := unstructured.NestedInt64(u.Object, "status", "drainingGeneration")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	switch {
	case obs > gen:
		r.violations = append(r.violations, fmt.Sprintf("observedGeneration %d above generation %d: %s", obs, gen, e))
	case obs == gen && (e.Phase != "stable" && e.Phase != "stopped" || e.Current != e.Active || draining):
		r.violations = append(r.violations, fmt.Sprintf("observedGeneration %d = generation during a rollout: %s", obs, e))
	}
}

func (r *claimRecorder) check(s *scenario) {
	s.t.Helper()
	r.stop()
	r.done.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reads == 0 {
		s.t.Error("the claim was never read")
	}
	for _, v := range r.violations {
		s.t.Error(v)
	}
}
