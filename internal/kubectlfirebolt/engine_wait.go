package kubectlfirebolt

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// watchTimeout bounds one watch request; the wait re-watches from where it
// left off until its own timeout.
const watchTimeout = 5 * time.Minute

// rewatchBackoff spaces re-watches after a watch that ended without
// delivering anything, so a server that closes watches at once is not
// hammered.
const rewatchBackoff = time.Second

type engineWaitCmd struct {
	Name    string        `arg:"" help:"The engine."`
	Timeout time.Duration `default:"10m" help:"How long to wait."`
}

// Run waits until the engine's spec is in effect.
func (cmd engineWaitCmd) Run(e *Env) error {
	c, err := e.begin("engine wait", outTable)
	if err != nil {
		return err
	}
	if err := checkTimeout(cmd.Timeout); err != nil {
		return err
	}
	_, err = (&waiter{env: e, out: e.Out, clients: c, name: cmd.Name, timeout: cmd.Timeout, goal: specInEffect}).run()
	return err
}

func checkTimeout(d time.Duration) error {
	if d <= 0 {
		return errors.Errorf("--timeout %s: must be a positive duration such as 90s or 10m", d)
	}
	return nil
}

// goal says whether an engine is where a wait wants it, and if so in which
// words.
type goal func(e engineClaim) (string, bool)

// specInEffect: the claim's latest spec is fully in effect (the function
// reports its generation as observed only once the rollout is done and the
// old generation gone), and the engine serves with every pod Ready, or is
// stopped.
func specInEffect(e engineClaim) (string, bool) {
	if e.Status.ObservedGeneration != e.Metadata.Generation {
		return "", false
	}
	switch e.Status.Phase {
	case v1alpha1.EnginePhaseStable:
		if e.Status.Conditions.ready() == "True" {
			return fmt.Sprintf("stable and Ready, generation %d of the spec in effect", e.Metadata.Generation), true
		}
	case v1alpha1.EnginePhaseStopped:
		return fmt.Sprintf("stopped, generation %d of the spec in effect", e.Metadata.Generation), true
	default:
	}
	return "", false
}

// serving: the spec is in effect and the engine serves, not stopped.
func serving(e engineClaim) (string, bool) {
	if e.Status.Phase == v1alpha1.EnginePhaseStopped {
		return "", false
	}
	return specInEffect(e)
}

// waiter watches one engine claim until goal holds, printing its phase
// each time it changes.
type waiter struct {
	env *Env
	// out gets the progress lines.
	out     io.Writer
	clients Clients
	name    string
	timeout time.Duration
	goal    goal

	last      *engineClaim
	lastPhase string
}

// run waits. It fails with the last phase and the conditions that are not
// True when the timeout passes, and when the engine is deleted.
func (w *waiter) run() (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(w.env.Ctx, w.timeout)
	defer cancel()
	res := w.clients.Dynamic.Resource(engineResource).Namespace(w.clients.Namespace)
	for {
		u, err := res.Get(ctx, w.name, metav1.GetOptions{})
		switch {
		case ctx.Err() != nil:
			return nil, w.timedOut()
		case kerrors.IsNotFound(err) && w.last != nil:
			return nil, w.deleted()
		case err != nil:
			return nil, notFound(err, engineResource, w.name, w.clients.Namespace)
		}
		if done, err := w.observe(u); done || err != nil {
			return u, err
		}
		got, done, err := w.watch(ctx, res, u.GetResourceVersion())
		switch {
		case done || err != nil:
			return got, err
		case ctx.Err() != nil:
			return nil, w.timedOut()
		case got == nil:
			// The watch ended having delivered nothing.
			select {
			case <-ctx.Done():
				return nil, w.timedOut()
			case <-time.After(rewatchBackoff):
			}
		}
	}
}

// watch follows the claim from resourceVersion rv for at most
// watchTimeout. It returns the object that met the goal (done), or the
// last object it saw (nil if none) once the watch ends, expires or its
// resource version is too old, so that run reads the claim afresh.
func (w *waiter) watch(ctx context.Context, res dynamic.ResourceInterface, rv string) (*unstructured.Unstructured, bool, error) {
	secs := int64(watchTimeout / time.Second)
	if dl, ok := ctx.Deadline(); ok {
		if left := int64(time.Until(dl)/time.Second) + 1; left < secs {
			secs = left
		}
	}
	wi, err := res.Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", w.name).String(),
		ResourceVersion: rv,
		TimeoutSeconds:  &secs,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, nil
		}
		return nil, false, errors.Wrapf(err, "cannot watch fireboltengine %q", w.name)
	}
	defer wi.Stop()
	var seen *unstructured.Unstructured
	for {
		select {
		case <-ctx.Done():
			return seen, false, nil
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return seen, false, nil
			}
			u, done, end, err := w.event(ev)
			if u != nil {
				seen = u
			}
			if done || end || err != nil {
				return seen, done, err
			}
		}
	}
}

// event handles one watch event: u is the claim it carries, done says the
// goal is met, end that the watch must be left for a fresh read.
func (w *waiter) event(ev watch.Event) (u *unstructured.Unstructured, done, end bool, err error) {
	switch ev.Type {
	case watch.Added, watch.Modified:
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || u.GetName() != w.name {
			return nil, false, false, nil
		}
		done, err := w.observe(u)
		return u, done, false, err
	case watch.Deleted:
		if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetName() == w.name {
			return nil, false, true, w.deleted()
		}
	case watch.Error:
		// Most often 410 Gone: the resource version is too old. Read the
		// claim afresh; any other error ends the wait.
		if st := kerrors.FromObject(ev.Object); !kerrors.IsGone(st) && !kerrors.IsResourceExpired(st) {
			return nil, false, true, errors.Wrapf(st, "cannot watch fireboltengine %q", w.name)
		}
		return nil, false, true, nil
	case watch.Bookmark:
	}
	return nil, false, false, nil
}

// observe reads one state of the claim, prints its phase if it changed,
// and says whether the goal is met (printing so).
func (w *waiter) observe(u *unstructured.Unstructured) (bool, error) {
	e, err := readEngine(u)
	if err != nil {
		return false, err
	}
	w.last = &e
	out := w.out
	if msg, ok := w.goal(e); ok {
		_, err := fmt.Fprintf(out, "fireboltengine/%s: %s\n", w.name, msg)
		return true, err
	}
	phase := phaseWords(e)
	if phase == w.lastPhase {
		return false, nil
	}
	w.lastPhase = phase
	_, err = fmt.Fprintf(out, "fireboltengine/%s: %s (spec generation %d, %d in effect)\n", w.name, phase, e.Metadata.Generation, e.Status.ObservedGeneration)
	return false, err
}

func phaseWords(e engineClaim) string {
	if e.Status.Phase == "" {
		return "no phase yet"
	}
	return string(e.Status.Phase)
}

func (w *waiter) timedOut() error {
	if w.last == nil {
		return errors.Errorf("timed out after %s waiting for fireboltengine %q: it was never read", w.timeout, w.name)
	}
	return errors.Errorf("timed out after %s waiting for fireboltengine/%s: %s", w.timeout, w.name, w.summary())
}

func (w *waiter) deleted() error {
	if w.last == nil {
		return errors.Errorf("fireboltengine/%s was deleted while waiting", w.name)
	}
	return errors.Errorf("fireboltengine/%s was deleted while waiting: %s", w.name, w.summary())
}

// summary is the last phase and every condition that is not True.
func (w *waiter) summary() string {
	e := *w.last
	var b strings.Builder
	fmt.Fprintf(&b, "last phase %s, spec generation %d, %d in effect", phaseWords(e), e.Metadata.Generation, e.Status.ObservedGeneration)
	for _, c := range e.Status.Conditions {
		if c.Status != "True" {
			fmt.Fprintf(&b, "\n  %s=%s %s%s", c.Type, c.Status, c.Reason, prefixed(": ", c.Message))
		}
	}
	return b.String()
}
