package kubectlfirebolt

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ktesting "k8s.io/client-go/testing"
)

// TestEngineDeleteWaits: delete waits, as kubectl delete does, while
// Crossplane's finalizer holds the claim, until it is gone or replaced by
// a new claim of the same name; --no-wait does not; a claim still there
// after --timeout is an error that says what holds it.
func TestEngineDeleteWaits(t *testing.T) {
	held := "error: fireboltengine \"adhoc\" is being deleted but still there after 50ms: Crossplane deletes what it composed first; see kubectl firebolt engine status adhoc\n"
	cases := map[string]struct {
		args []string
		// heldFor is how many reads after the delete still find the claim;
		// -1 is all of them.
		heldFor  int
		replaced bool
		want     result
		// reads are the reads after the delete.
		reads int
	}{
		"GoneAtOnce":       {args: []string{"engine", "delete", "adhoc"}, want: result{Stdout: "fireboltengine \"adhoc\" deleted\n"}, reads: 1},
		"HeldByFinalizer":  {args: []string{"engine", "delete", "adhoc"}, heldFor: 3, want: result{Stdout: "fireboltengine \"adhoc\" deleted\n"}, reads: 4},
		"ReplacedByNewOne": {args: []string{"engine", "delete", "adhoc", "-o", "name"}, heldFor: -1, replaced: true, want: result{Stdout: "fireboltengine/adhoc\n"}, reads: 1},
		"NoWait":           {args: []string{"engine", "delete", "adhoc", "--no-wait"}, heldFor: -1, want: result{Stdout: "fireboltengine \"adhoc\" deleted\n"}, reads: 0},
		"TimesOut":         {args: []string{"engine", "delete", "adhoc", "--timeout", "50ms"}, heldFor: -1, want: result{Code: 1, Stderr: held}, reads: -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeCluster(t, engines(t))
			claim, err := f.dyn.Resource(engineResource).Namespace(testNamespace).Get(t.Context(), "adhoc", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			claim.SetUID("uid-1")
			var mu sync.Mutex
			deleted, reads := false, 0
			var preconditionUID types.UID
			f.dyn.PrependReactor("delete", "fireboltengines", func(a ktesting.Action) (bool, runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				deleted = true
				if p := a.(ktesting.DeleteActionImpl).DeleteOptions.Preconditions; p != nil && p.UID != nil {
					preconditionUID = *p.UID
				}
				return true, nil, nil
			})
			f.dyn.PrependReactor("get", "fireboltengines", func(ktesting.Action) (bool, runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				if !deleted {
					return true, claim.DeepCopy(), nil
				}
				reads++
				switch {
				case tc.replaced:
					c := claim.DeepCopy()
					c.SetUID("uid-2")
					return true, c, nil
				case tc.heldFor < 0 || reads <= tc.heldFor:
					return true, claim.DeepCopy(), nil
				}
				return true, nil, kerrors.NewNotFound(engineResource.GroupResource(), "adhoc")
			})
			got := f.run(t, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if !deleted || preconditionUID != "uid-1" {
				t.Errorf("deleted %t with UID precondition %q, want the claim read (uid-1)", deleted, preconditionUID)
			}
			if tc.reads >= 0 && reads != tc.reads {
				t.Errorf("%d reads after the delete, want %d", reads, tc.reads)
			}
			if tc.reads < 0 && reads < 2 {
				t.Errorf("%d reads after the delete before timing out, want it to poll", reads)
			}
		})
	}
}
