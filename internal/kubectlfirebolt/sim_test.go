package kubectlfirebolt

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// watches makes the n-th Watch of engines return ws[n] (the last one once
// they run out) and records every Watch's options.
type watches struct {
	mu   sync.Mutex
	ws   []*watch.RaceFreeFakeWatcher
	opts []metav1.ListOptions
}

func (f *fakeCluster) watches(ws ...*watch.RaceFreeFakeWatcher) *watches {
	w := &watches{ws: ws}
	f.dyn.PrependWatchReactor(engineResource.Resource, func(a k8stesting.Action) (bool, watch.Interface, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		n := len(w.opts)
		w.opts = append(w.opts, a.(k8stesting.WatchActionImpl).ListOptions)
		return true, w.ws[min(n, len(w.ws)-1)], nil
	})
	return w
}

// gets makes the n-th Get of an engine return objs[n], the n-th object or
// NotFound for nil; the tracker answers once they run out.
func (f *fakeCluster) gets(objs ...*unstructured.Unstructured) {
	var mu sync.Mutex
	n := 0
	f.dyn.PrependReactor("get", engineResource.Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if n >= len(objs) {
			return false, nil, nil
		}
		o := objs[n]
		n++
		if o == nil {
			return true, nil, kerrors.NewNotFound(engineResource.GroupResource(), a.(k8stesting.GetAction).GetName())
		}
		return true, o.DeepCopy(), nil
	})
}

// applies stands in for the API server's server-side apply of engines:
// the applied fields replace the stored spec's, metadata.generation moves
// when the spec changes, and after each apply the statuses are sent, in
// order, as Modified events of the applied object on the watcher, as the
// function would move the engine.
type applies struct {
	mu      sync.Mutex
	patches []appliedPatch
}

type appliedPatch struct {
	Name         string
	Type         types.PatchType
	FieldManager string
	Force        *bool
	Body         map[string]any
}

func (f *fakeCluster) applies(t *testing.T, w *watch.RaceFreeFakeWatcher, statuses ...map[string]any) *applies {
	t.Helper()
	ap := &applies{}
	tracker := f.dyn.Tracker()
	f.dyn.PrependReactor("patch", engineResource.Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchActionImpl)
		var body map[string]any
		if err := json.Unmarshal(pa.GetPatch(), &body); err != nil {
			return true, nil, err
		}
		ap.mu.Lock()
		ap.patches = append(ap.patches, appliedPatch{pa.GetName(), pa.GetPatchType(), pa.PatchOptions.FieldManager, pa.PatchOptions.Force, runtime.DeepCopyJSON(body)})
		ap.mu.Unlock()
		if pa.GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(pa.GetPatch()); err != nil {
			return true, nil, err
		}
		existing, err := tracker.Get(engineResource, pa.GetNamespace(), pa.GetName())
		switch {
		case kerrors.IsNotFound(err):
			u.SetGeneration(1)
			err = tracker.Create(engineResource, u, pa.GetNamespace())
		case err != nil:
			return true, nil, err
		default:
			old := existing.(*unstructured.Unstructured)
			spec, _, _ := unstructured.NestedMap(old.Object, "spec")
			for k, v := range u.Object["spec"].(map[string]any) {
				spec[k] = v
			}
			merged := old.DeepCopy()
			merged.Object["spec"] = spec
			if !cmp.Equal(old.Object["spec"], spec) {
				merged.SetGeneration(old.GetGeneration() + 1)
			}
			u = merged
			err = tracker.Update(engineResource, u, pa.GetNamespace())
		}
		if err != nil {
			return true, nil, err
		}
		for _, st := range statuses {
			ev := u.DeepCopy()
			ev.Object["status"] = runtime.DeepCopyJSON(st)
			w.Modify(ev)
		}
		return true, u.DeepCopy(), nil
	})
	return ap
}

// status is an engine status: phase, observedGeneration and Ready.
func status(phase string, observed int64, ready string) map[string]any {
	st := map[string]any{"phase": phase, "observedGeneration": observed}
	if ready != "" {
		st["conditions"] = []any{map[string]any{"type": "Ready", "status": ready, "reason": map[string]string{"True": "Available", "False": "Creating"}[ready]}}
	}
	return st
}
