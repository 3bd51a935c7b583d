package kubectlfirebolt

import (
	"context"
	"fmt"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
)

type engineDeleteCmd struct {
	Name    string        `arg:"" help:"The engine."`
	Wait    bool          `default:"true" negatable:"" help:"Wait until the claim is gone, as kubectl delete does (--no-wait returns at once)."`
	Timeout time.Duration `default:"5m" help:"How long to wait."`
}

// Run deletes the engine's claim and, as kubectl delete does, waits until
// it is gone: Crossplane's finalizer holds it until what it composed is
// deleted, and an engine of the same name applied before then would land
// on the claim being deleted.
func (cmd engineDeleteCmd) Run(e *Env) error {
	c, err := e.begin("engine delete", outTable, outName)
	if err != nil {
		return err
	}
	if err := checkTimeout(cmd.Timeout); err != nil {
		return err
	}
	res := c.Dynamic.Resource(engineResource).Namespace(c.Namespace)
	u, err := res.Get(e.Ctx, cmd.Name, metav1.GetOptions{})
	if err == nil {
		err = res.Delete(e.Ctx, cmd.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(u.GetUID())}})
	}
	switch {
	case kerrors.IsNotFound(err):
		// As the original's --ignore-not-found: deleting what is gone is
		// done, and stdout stays empty as kubectl's; the note is for people.
		_, err = fmt.Fprintf(e.Err, "fireboltengine %q not found in namespace %q: nothing to delete\n", cmd.Name, c.Namespace)
		return err
	case err != nil:
		return errors.Wrapf(err, "cannot delete fireboltengine %q", cmd.Name)
	}
	if cmd.Wait {
		if err := waitGone(e.Ctx, res, cmd.Name, u.GetUID(), cmd.Timeout); err != nil {
			return err
		}
	}
	if e.Globals.Output == outName {
		_, err = fmt.Fprintf(e.Out, "fireboltengine/%s\n", cmd.Name)
		return err
	}
	_, err = fmt.Fprintf(e.Out, "fireboltengine %q deleted\n", cmd.Name)
	return err
}

// waitGone waits until the object name of uid is gone (or replaced by a
// new one of the same name), or timeout passes. A failed read is retried
// until the timeout: the delete was accepted, and one read says nothing
// about the claim.
func waitGone(ctx context.Context, res dynamic.ResourceInterface, name string, uid types.UID, timeout time.Duration) error {
	err := waitUntil(ctx, timeout, "deletion", func(ctx context.Context) (bool, error) {
		u, err := res.Get(ctx, name, metav1.GetOptions{})
		return kerrors.IsNotFound(err) || (err == nil && u.GetUID() != uid), nil
	})
	if err != nil {
		return errors.Errorf("fireboltengine %q is being deleted but still there after %s: Crossplane deletes what it composed first; see kubectl firebolt engine status %s", name, timeout, name)
	}
	return nil
}
