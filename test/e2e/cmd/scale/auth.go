package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
	"github.com/firebolt-db/firebolt-crossplane/test/scale"
)

// The rotation is the one of the end-to-end test
// TestAuthRotatesWithoutAValidationGap: tokens live 20 s and a demoted key
// is kept as long. The first key was issued when the instance became ready,
// minutes before the rotation phase, so an interval of 30 s mints the next
// key at once; once it is recorded the interval is raised to an hour, so
// the walk ends with one key.
const (
	adminSecret    = "admin-pw"
	startInterval  = "30s"
	stopInterval   = "1h"
	retainDuration = "20s"
	nextKey        = "signing-2"
	// rotationDone is the key state a finished rotation leaves.
	rotationDone = nextKey + " Active"
	// rotationPhase names the phase in the report.
	rotationPhase = "signing-key rotation"

	// composeDuration is the function's histogram of its calls' time, by
	// the composite's kind.
	composeDuration = metrics.Prefix + "compose_duration_seconds"
)

// authSpec is spec.auth of the measured instance: an admin logging in with
// the password of adminSecret, ES384 keys from the stack's CA ClusterIssuer,
// and, with an interval, a rotation.
func authSpec(interval string) map[string]any {
	keys := map[string]any{"certManager": map[string]any{
		"issuerRef": map[string]any{"name": harness.CAIssuer, "kind": "ClusterIssuer"}, "algorithm": "ECDSA", "size": int64(384),
	}}
	if interval != "" {
		keys["rotationInterval"], keys["retainDuration"] = interval, retainDuration
	}
	return map[string]any{"enabled": true, "local": map[string]any{
		"admin":            map[string]any{"name": "firebolt", "password": map[string]any{"name": adminSecret, "key": "password"}},
		"signingAlgorithm": "ES384", "maxTokenAge": "20s", "clockSkewTolerance": "0s", "signingKeys": keys,
	}}
}

// prepareAuth creates the admin password's Secret and gives inst spec.auth
// without a rotation.
func (m *meter) prepareAuth(ctx context.Context, inst *unstructured.Unstructured) error {
	pw := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: adminSecret, Namespace: namespace},
		StringData: map[string]string{"password": "scale-admin-password"},
	}
	if _, err := m.c.Kube.CoreV1().Secrets(namespace).Create(ctx, pw, metav1.CreateOptions{}); err != nil && !kerrors.IsAlreadyExists(err) {
		return errors.Wrap(err, "cannot create the admin password Secret")
	}
	return errors.Wrap(unstructured.SetNestedField(inst.Object, authSpec(""), "spec", "auth"), "cannot set the instance's spec.auth")
}

// setRotation applies the instance with a rotation interval: a user's edit,
// so it stays in the figures.
func (m *meter) setRotation(ctx context.Context, interval string) error {
	u := m.instance.DeepCopy()
	if err := unstructured.SetNestedField(u.Object, authSpec(interval), "spec", "auth"); err != nil {
		return errors.Wrap(err, "cannot set the instance's spec.auth")
	}
	if _, err := m.c.Apply(ctx, u); err != nil {
		return err
	}
	m.countWorkload(u)
	return nil
}

// rotation measures a signing-key rotation of the instance: from the edit
// that starts it until the instance has the next key alone, the first
// key's Certificate is gone and every engine is stable on a generation
// newer than before. Besides what every phase measures it counts the
// function's calls for the instance and the key states it went through.
func (m *meter) rotation(ctx context.Context, rep *scale.Report) (*scale.Report, error) {
	xr, err := m.instanceComposite(ctx)
	if err != nil {
		return rep, err
	}
	before, _, _, err := m.check(nil)
	if err != nil {
		return rep, err
	}
	w := &rotationWait{m: m, r: &scale.Rotation{Composite: xr}, before: before}
	rep.Rotation = w.r
	// Calls before the phase are not the rotation's.
	if _, err := m.countInstanceCalls(xr); err != nil {
		return rep, err
	}
	w.calls0 = m.instanceCalls
	if w.compose0, err = instanceComposeTime(ctx); err != nil {
		return rep, err
	}
	s0, err := m.snapshot(ctx)
	if err != nil {
		return rep, err
	}
	w.start = s0.at
	if err := m.setRotation(ctx, startInterval); err != nil {
		return rep, err
	}
	m.logf("set rotationInterval %s on instance %s (composite %s): a rotation starts", startInterval, m.instance.GetName(), xr)
	waitErr := w.wait(ctx)
	if err := w.finish(ctx); err != nil && waitErr == nil {
		return rep, err
	}
	if waitErr != nil {
		return m.timedOut(ctx, rep, rotationPhase, s0, waitErr)
	}
	s1, err := m.snapshot(ctx)
	if err != nil {
		return rep, err
	}
	p, err := phase(rotationPhase, s0, s1, true)
	if err != nil {
		return rep, err
	}
	rep.Phases = append(rep.Phases, p)
	m.logf("rotation done %s after it started: %d steps, %d calls for the instance", p.Took.Round(100*time.Millisecond), len(w.r.Steps)-1, w.r.Calls)
	return rep, m.peakMemory(rep)
}

// A rotationWait follows one rotation.
type rotationWait struct {
	m *meter
	r *scale.Rotation
	// before is each engine's active generation when the phase started.
	before map[string]int64
	start  time.Time
	// calls0 and compose0 are the instance's calls and the function's
	// time composing instances when the phase started.
	calls0   int
	compose0 float64
	// raised is set once the interval was raised to stopInterval.
	raised bool
}

// wait looks every pollEvery until the rotation is done, within
// cfg.rotationTimeout. A timeout names what it last saw: the keys, the
// step the instance waits for and the engines it waits on, AuthReady and
// the engines' phases.
func (w *rotationWait) wait(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, w.m.cfg.rotationTimeout)
	defer cancel()
	seen := "(nothing yet)"
	for {
		if err := w.m.running(); err != nil {
			return err
		}
		done, s, err := w.look(ctx)
		if err != nil {
			return err
		}
		if s != "" {
			seen = s
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return errors.Errorf("timed out after %s waiting for the rotation to end with %s alone and every engine stable on a new generation; last saw: %s (raise the bound with -rotation-timeout)",
				time.Since(w.start).Round(time.Second), nextKey, seen)
		case <-time.After(pollEvery):
		}
	}
}

// look reads the instance once, records a key state not seen before as a
// step, raises the interval once the next key is recorded, and says whether
// the rotation is done. Errors of the API server are seen, not returned:
// the control plane is busy while every engine rolls.
func (w *rotationWait) look(ctx context.Context) (bool, string, error) {
	u, err := w.m.c.Get(ctx, w.m.instance)
	if err != nil {
		return false, harness.SeenErr(err), nil
	}
	st, err := authStatus(u)
	if err != nil {
		return false, "", err
	}
	calls, err := w.m.countInstanceCalls(w.r.Composite)
	if err != nil {
		return false, "", err
	}
	keys := describeKeys(st)
	at := time.Since(w.start)
	if n := len(w.r.Steps); n == 0 || w.r.Steps[n-1].Keys != keys {
		w.r.Steps = append(w.r.Steps, scale.RotationStep{Keys: keys, At: at, Calls: calls - w.calls0})
		w.m.logf("rotation: keys %s after %s (%d calls for the instance)", keys, at.Round(100*time.Millisecond), calls-w.calls0)
	}
	seen := fmt.Sprintf("keys %s; pending step %q, %d lagging engines %v; AuthReady=%s",
		keys, st.PendingRotationStep, st.LaggingEngineCount, st.LaggingEngines, harness.Condition(u, "AuthReady"))
	if !w.raised && hasKey(st, nextKey) {
		if err := w.m.setRotation(ctx, stopInterval); err != nil {
			return false, seen + "; raising the interval: " + harness.SeenErr(err), nil
		}
		w.raised = true
		w.m.logf("rotation: raised rotationInterval to %s", stopInterval)
	}
	if keys != rotationDone {
		return false, seen, nil
	}
	cert := w.m.instance.GetName() + "-auth-signing"
	if gone, s := w.m.certificateGone(ctx, cert); !gone {
		return false, seen + "; " + s, nil
	}
	_, ok, engines, err := w.m.check(w.before)
	if err != nil {
		return false, "", err
	}
	if ok {
		w.r.Done = scale.RotationStep{Keys: "every engine stable on a new generation, Certificate " + cert + " deleted", At: at, Calls: calls - w.calls0}
	}
	return ok, seen + "; engines: " + engines, nil
}

// finish fills in what the rotation measured as a whole.
func (w *rotationWait) finish(ctx context.Context) error {
	calls, err := w.m.countInstanceCalls(w.r.Composite)
	if err != nil {
		return err
	}
	w.r.Calls = calls - w.calls0
	if active, _, _, err := w.m.check(nil); err == nil {
		for name, gen := range active {
			w.r.Advanced += gen - w.before[name]
		}
	}
	sum, err := instanceComposeTime(ctx)
	if err != nil {
		return err
	}
	w.r.ComposeSeconds = sum - w.compose0
	w.r.Services, w.r.ServiceBytes, err = w.m.routingServices(ctx)
	return err
}

// instanceComposite is the name of the instance claim's composite, which
// the function's log names.
func (m *meter) instanceComposite(ctx context.Context) (string, error) {
	u, err := m.c.Get(ctx, m.instance)
	if err != nil {
		return "", errors.Wrap(err, "cannot read the instance")
	}
	name, _, _ := unstructured.NestedString(u.Object, "spec", "resourceRef", "name")
	if name == "" {
		return "", errors.Errorf("instance %s has no composite in spec.resourceRef", m.instance.GetName())
	}
	return name, nil
}

// countInstanceCalls reads what the function's log gained and returns the
// calls for composite counted so far.
func (m *meter) countInstanceCalls(composite string) (int, error) {
	n, read, err := countLines(m.c.Process("function").Log, m.fnLogRead, callEnd(composite))
	if err != nil {
		return 0, errors.Wrap(err, "cannot read the function's log")
	}
	m.instanceCalls += n
	m.fnLogRead = read
	return m.instanceCalls, nil
}

// callEnd matches the line that ends a call for composite: the function
// logs it at debug level with the composite's name, "Composed", or "Cannot
// compose" with the error. The composer's own line before it ("Composed
// instance") is not counted.
func callEnd(composite string) func([]byte) bool {
	name := []byte(`"name": "` + composite + `"`)
	return func(line []byte) bool {
		return bytes.Contains(line, name) && (bytes.Contains(line, []byte("\tComposed\t")) || bytes.Contains(line, []byte("\tCannot compose\t")))
	}
}

// instanceComposeTime reads the function's total time in its calls for
// instances (the stack has one).
func instanceComposeTime(ctx context.Context) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+harness.FunctionMetricsAddress+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, errors.Wrap(err, "cannot read the function's metrics")
	}
	defer rsp.Body.Close() //nolint:errcheck // Read only.
	if rsp.StatusCode != http.StatusOK {
		return 0, errors.Errorf("the function's metrics answered %s", rsp.Status)
	}
	_, sum, err := scale.HistogramSeries(io.LimitReader(rsp.Body, 64<<20), composeDuration, "kind", v1alpha1.XFireboltInstanceKind)
	return sum, err
}

// routingServices lists the Services the instance requires of its engines,
// as Crossplane's does, and sizes them as JSON: what every call of the
// instance is sent about its engines.
func (m *meter) routingServices(ctx context.Context) (int, int, error) {
	sel := contract.LabelInstanceRef + "=" + m.instance.GetName() + "," + contract.LabelComponent + "=" + contract.ComponentEngineRouting
	l, err := m.c.Dyn.Resource(corev1.SchemeGroupVersion.WithResource("services")).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return 0, 0, errors.Wrap(err, "cannot list the engines' routing Services")
	}
	size := 0
	for i := range l.Items {
		b, err := json.Marshal(l.Items[i].Object)
		if err != nil {
			return 0, 0, errors.Wrapf(err, "cannot encode Service %s", l.Items[i].GetName())
		}
		size += len(b)
	}
	return len(l.Items), size, nil
}

// certificateGone says whether the Certificate name is deleted, and if not
// what was seen.
func (m *meter) certificateGone(ctx context.Context, name string) (bool, string) {
	ri, err := m.c.Resource(harness.CertificateGVK, namespace)
	if err != nil {
		return false, harness.SeenErr(err)
	}
	_, err = ri.Get(ctx, name, metav1.GetOptions{})
	switch {
	case kerrors.IsNotFound(err):
		return true, ""
	case err != nil:
		return false, "Certificate " + name + ": " + harness.SeenErr(err)
	}
	return false, "Certificate " + name + " still exists"
}

// authStatus decodes the instance's status.auth.
func authStatus(u *unstructured.Unstructured) (v1alpha1.AuthStatus, error) {
	var st v1alpha1.AuthStatus
	m, found, err := unstructured.NestedMap(u.Object, "status", "auth")
	if err != nil || !found {
		return st, errors.Wrap(err, "cannot read the instance's status.auth")
	}
	return st, errors.Wrap(runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st), "cannot decode the instance's status.auth")
}

// describeKeys is the key state a step reaches: each key's phase, and
// whether its retirement window started (the retire-anchor step changes
// nothing else).
func describeKeys(st v1alpha1.AuthStatus) string {
	parts := make([]string, 0, len(st.SigningKeys))
	for _, k := range st.SigningKeys {
		s := k.ID + " " + string(k.Phase)
		if k.RetireEligibleAt != nil {
			s += " (retire-eligible)"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, ", ")
}

func hasKey(st v1alpha1.AuthStatus, id string) bool {
	for _, k := range st.SigningKeys {
		if k.ID == id {
			return true
		}
	}
	return false
}
