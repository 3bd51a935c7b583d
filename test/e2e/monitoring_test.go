package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/firebolt-db/firebolt-crossplane/fn/statemetrics"
	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
	"github.com/firebolt-db/firebolt-crossplane/test/monitoringkit"
)

// Addresses of this scenario's own processes.
const (
	replicaAddress        = "127.0.0.1:19643"
	replicaMetricsAddress = "127.0.0.1:19644"
	kitPrometheusAddress  = "127.0.0.1:19690"
	kitWakeHoldAddress    = "127.0.0.1:19912"
	// The pod labels of the two function processes' series.
	functionPod = "function"
	replicaPod  = "function-replica"
	// monitoringTimeout bounds a wait for Prometheus to see a change: a
	// scrape and an evaluation every second, the informers at once.
	monitoringTimeout = 2 * time.Minute
	// leaseRestWindow is how long the Lease's writes are counted at rest.
	leaseRestWindow = 2 * time.Minute
)

// Scenario (issue 29): the monitoring kit in deploy/monitoring, on the real
// stack. A Prometheus is configured as the Prometheus Operator would
// configure it from the kit's PodMonitors (their selectors and named ports,
// run against the real gateway and engine pods), plus the function's two
// replicas and Crossplane, and loads the kit's PrometheusRule. With an
// engine rolled (its drain checks failing for a while) and an instance up:
//   - the original operator's series for the engine and the instance read
//     what their status says, from exactly one function replica;
//   - every dashboard query and every alert expression parses and returns
//     series (for an alert that is silent when healthy, each of its
//     selectors does), and the drain and breaker alerts go pending on the
//     real conditions;
//   - every rule evaluates with health ok;
//   - once the engine is deleted, its series are gone.
//
// It also measures the Lease's writes at rest.
func TestMonitoringKit(t *testing.T) {
	s := newScenario(t, "s-monitoring")
	root := harness.Root()
	leaseWrites := s.watchLeaseWrites()

	// A second replica of the function: the same identity and Lease. It is
	// never called; it must keep its cache and export no state series.
	replica, err := cp.StartFunctionReplica(s.ctx, "function-replica", replicaAddress, replicaMetricsAddress)
	s.must(err)
	t.Cleanup(replica.Stop)

	prom := s.startKitPrometheus(root)

	inst := s.instance("demo")
	s.apply(inst)
	s.waitInstanceReady(inst)
	eng := s.engine("demo", "demo", "", 2)
	s.apply(eng)
	st := s.waitStable(eng, -1)

	// Roll to 3 replicas while the old generation's metrics fail: drain
	// checks fail until they are readable again.
	old := podPrefix("demo", st.Active)
	cp.Pods.Set(s.ns, old, harness.Behaviour{Mode: harness.Failing})
	s.apply(s.engine("demo", "demo", "", 3))
	s.waitEngine(eng, rolloutTimeout, "draining with DrainCheckFailing", func(e engineState) bool {
		return e.Phase == "draining" && e.EngineReady.Reason == "DrainCheckFailing"
	})
	s.wait(monitoringTimeout, "failed drain checks counted in Prometheus", func(ctx context.Context) (bool, string, error) {
		v, err := prom.value(ctx, fmt.Sprintf(`sum(firebolt_engine_drain_check_errors_total{namespace=%q, name="demo"})`, s.ns))
		return err == nil && v > 0, fmt.Sprintf("%v (%v)", v, err), nil
	})
	cp.Pods.Set(s.ns, old, harness.Behaviour{Mode: harness.Idle})
	st = s.waitStable(eng, st.Active)

	s.checkOriginalSeries(prom, eng, inst, st.Active)

	// The gateway's wake agent, serving its metrics where its pod says:
	// on the pod's IP, at the port the kit's PodMonitor names. A request
	// for an engine that has no endpoint is held (and given up on).
	wake := s.startKitWakeAgent(root)
	t.Cleanup(wake.Stop)
	s.holdOnce("nosuch")

	// Open Crossplane's circuit breaker for the engine's composite, as the
	// breaker scenario does: its dropped events are what the breaker alert
	// and panels read.
	s.openBreaker(eng)

	s.checkDashboardQueries(prom, root)
	s.checkAlerts(prom, root)

	// The engine goes: so do its series.
	s.must(cp.Delete(s.ctx, eng))
	s.wait(deletionTimeout, "the engine claim gone", func(context.Context) (bool, string, error) {
		u, err := s.get(eng)
		return err == nil && u == nil, fmt.Sprintf("%v", err), nil
	})
	s.wait(monitoringTimeout, "the deleted engine's series gone from Prometheus", func(ctx context.Context) (bool, string, error) {
		v, err := prom.vector(ctx, fmt.Sprintf(`{__name__=~"firebolt_engine_.+", namespace=%q, name="demo"}`, s.ns))
		return err == nil && len(v) == 0, fmt.Sprintf("%d series (%v)", len(v), err), nil
	})

	n, d := leaseWrites()
	t.Logf("the state metrics Lease was written %d times in the %s of the scenario", n, d.Round(time.Second))

	// The Lease's cost at rest, measured: a minute in which nothing moves.
	atRest := s.watchLeaseWrites()
	select {
	case <-s.ctx.Done():
	case <-time.After(leaseRestWindow):
	}
	n, d = atRest()
	t.Logf("at rest, the state metrics Lease was written %d times in %s: %.1f writes a minute (two function processes)", n, d.Round(time.Second), float64(n)/d.Minutes())
}

// checkOriginalSeries reads the original operator's series of the rolled
// engine and of the instance from Prometheus: they say what the
// composites' status says, and come from one function process only.
func (s *scenario) checkOriginalSeries(prom kitPrometheus, eng, inst *unstructured.Unstructured, active int64) {
	s.t.Helper()
	for what, tc := range map[string]struct {
		claim    *unstructured.Unstructured
		selector string
		must     model.LabelSet
		want     func(xr *unstructured.Unstructured) (map[string]float64, error)
	}{
		"engine demo": {
			claim:    eng,
			selector: fmt.Sprintf(`{__name__=~"firebolt_engine_.+", __name__!="firebolt_engine_drain_check_errors_total", namespace=%q, name="demo"}`, s.ns),
			must:     model.LabelSet{"instance": "demo", "job": "function-firebolt"},
			want:     func(xr *unstructured.Unstructured) (map[string]float64, error) { return wantEngineSeries(xr, active) },
		},
		"instance demo": {
			claim:    inst,
			selector: fmt.Sprintf(`{__name__=~"firebolt_instance_.+", namespace=%q, name="demo"}`, s.ns),
			must:     model.LabelSet{"job": "function-firebolt"},
			want:     wantInstanceSeries,
		},
	} {
		var last map[string]float64
		err := harness.Wait(s.ctx, monitoringTimeout, "the original's series of "+what+" in Prometheus", func(ctx context.Context) (bool, string, error) {
			// The status is read again on every try: Prometheus must
			// agree with the composite as it is.
			xr, err := s.composite(tc.claim)
			if err != nil {
				return false, harness.SeenErr(err), nil
			}
			want, err := tc.want(xr)
			if err != nil {
				return false, harness.SeenErr(err), nil
			}
			got, err := prom.series(ctx, tc.selector, tc.must)
			if err != nil {
				return false, harness.SeenErr(err), nil
			}
			last = got
			d := cmp.Diff(want, got)
			return d == "", d, nil
		})
		if err != nil {
			s.t.Errorf("%v\nlast read: %v", err, last)
			continue
		}
		s.t.Logf("the original's series of %s: all %d read as its status says", what, len(last))
	}

	// The failed drain checks were counted by the replica Crossplane calls;
	// the other exports the engine's counter at zero.
	drains, err := prom.vector(s.ctx, fmt.Sprintf(`firebolt_engine_drain_check_errors_total{namespace=%q, name="demo"}`, s.ns))
	s.must(err)
	byPod := map[string]float64{}
	for _, smp := range drains {
		if smp.Metric["instance"] != "demo" {
			s.t.Errorf("drain check errors series %s: instance %q, want demo", smp.Metric, smp.Metric["instance"])
		}
		byPod[string(smp.Metric["pod"])] = float64(smp.Value)
	}
	if len(byPod) != 2 || byPod[functionPod] < 1 || byPod[replicaPod] != 0 {
		s.t.Errorf("failed drain checks of demo by function process: %v, want at least 1 from %s (Crossplane calls it) and 0 from %s", byPod, functionPod, replicaPod)
	}

	// Exactly one process exports the state series.
	exp, err := prom.vector(s.ctx, "function_firebolt_state_metrics_exporting")
	s.must(err)
	values := make([]float64, 0, len(exp))
	for _, smp := range exp {
		values = append(values, float64(smp.Value))
	}
	sort.Float64s(values)
	if diff := cmp.Diff([]float64{0, 1}, values); diff != "" {
		s.t.Errorf("function_firebolt_state_metrics_exporting of the two replicas (-want +got):\n%s", diff)
	}
}

// watchLeaseWrites counts the writes of the state metrics Lease from now
// on: each is one Modified event (its renew time changes on every
// renewal). The harness's client ends every request after 30 s, so the
// watch is resumed from the last version seen. The returned func stops it
// and says how many writes, over how long.
func (s *scenario) watchLeaseWrites() func() (int, time.Duration) {
	s.t.Helper()
	leases := cp.Kube.CoordinationV1().Leases(harness.CrossplaneNamespace)
	l, err := leases.Get(s.ctx, statemetrics.DefaultLeaseName, metav1.GetOptions{})
	s.must(err)
	ctx, cancel := context.WithCancel(s.ctx)
	start := time.Now()
	counts := make(chan int, 1)
	go func() {
		n, rv := 0, l.ResourceVersion
		defer func() { counts <- n }()
		for ctx.Err() == nil {
			w, err := leases.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + statemetrics.DefaultLeaseName, ResourceVersion: rv})
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			failed := false
			for e := range w.ResultChan() {
				if m, ok := e.Object.(metav1.Object); ok && e.Type == watch.Modified {
					n++
					rv = m.GetResourceVersion()
				}
				failed = failed || e.Type == watch.Error
			}
			w.Stop()
			if failed {
				// An error event (say, a version too old): pause, then
				// count on from the Lease as it is.
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				if cur, err := leases.Get(ctx, statemetrics.DefaultLeaseName, metav1.GetOptions{}); err == nil {
					rv = cur.ResourceVersion
				}
			}
		}
	}()
	return func() (int, time.Duration) {
		d := time.Since(start)
		cancel()
		return <-counts, d
	}
}

// startKitWakeAgent runs the wake agent of the instance's gateway pod with
// its metrics where the pod declares them: the port the kit's wake agent
// PodMonitor names, on the pod's IP, so Prometheus finds it only if the
// PodMonitor's selector and port match the real pod.
func (s *scenario) startKitWakeAgent(root string) *harness.Process {
	s.t.Helper()
	pms, err := monitoringkit.PodMonitors(root)
	s.must(err)
	var port string
	for _, pm := range pms {
		if pm.Metadata.Name == "firebolt-gateway-wake-agent" {
			port = pm.Spec.PodMetricsEndpoints[0].Port
		}
	}
	pod := s.gatewayPod("demo")
	var number int32
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == port && p.Protocol != corev1.ProtocolUDP {
				number = p.ContainerPort
			}
		}
	}
	if number == 0 || pod.Status.PodIP == "" {
		s.t.Fatalf("gateway pod %s has no IP (%q) or no container port named %q", pod.Name, pod.Status.PodIP, port)
	}
	agent, err := cp.StartWakeAgent(s.ctx, pod, "wake-agent", kitWakeHoldAddress, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(number))))
	s.must(err)
	return agent
}

// holdOnce asks the wake agent to hold a request for engine, once its
// endpoints are known, and leaves after a second.
func (s *scenario) holdOnce(engine string) {
	s.t.Helper()
	s.wait(time.Minute, "the wake agent to hold a request for "+engine, func(ctx context.Context) (bool, string, error) {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+kitWakeHoldAddress+"/hold?engine="+engine, nil)
		if err != nil {
			return false, "", err
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			// Held until the client left: what was wanted.
			return ctx.Err() != nil, harness.SeenErr(err), nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(rsp.Body, 1<<16))
		_ = rsp.Body.Close()
		return false, "answered at once: " + rsp.Header.Get("x-firebolt-wake-decision"), nil
	})
}

// openBreaker opens Crossplane's circuit breaker for the claim's composite
// with annotation updates, as TestOpenBreakerClosesAtRest does.
func (s *scenario) openBreaker(claim *unstructured.Unstructured) {
	s.t.Helper()
	name := s.compositeName(claim)
	engines, err := cp.Resource(harness.XEngineGVK, "")
	s.must(err)
	for i := range breakerPokes {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.firebolt.io/poke":"%d"}}}`, i)
		_, err := engines.Patch(s.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		s.must(err)
	}
	s.wait(time.Minute, "the breaker of "+name+" open (Responsive False)", func(ctx context.Context) (bool, string, error) {
		u, err := engines.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, harness.SeenErr(err), nil
		}
		c := harness.Condition(u, "Responsive")
		return c.Status == "False", c.String(), nil
	})
}

// lastReconciled is a composite's status.lastReconciled as a unix time.
func lastReconciled(xr *unstructured.Unstructured) (float64, error) {
	v, _, _ := unstructured.NestedString(xr.Object, "status", "lastReconciled")
	ts, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return 0, fmt.Errorf("status.lastReconciled %q: %w", v, err)
	}
	return float64(ts.Unix()), nil
}

// wantEngineSeries is what the original's series of the rolled engine
// read: stable on generation active with three of three pods ready.
func wantEngineSeries(xr *unstructured.Unstructured, active int64) (map[string]float64, error) {
	last, err := lastReconciled(xr)
	if err != nil {
		return nil, err
	}
	want := map[string]float64{
		"firebolt_engine_spec_replicas":                        3,
		"firebolt_engine_active_generation":                    float64(active),
		"firebolt_engine_pods_ready":                           3,
		"firebolt_engine_pods_total":                           3,
		"firebolt_engine_draining_generation":                  -1,
		"firebolt_engine_last_reconciled_timestamp":            last,
		"firebolt_engine_status_condition{type=Ready}":         1,
		"firebolt_engine_status_condition{type=InstanceReady}": 1,
	}
	for _, p := range []string{"stable", "creating", "switching", "draining", "cleaning", "stopped", "updating"} {
		want["firebolt_engine_status_phase{phase="+p+"}"] = 0
	}
	want["firebolt_engine_status_phase{phase=stable}"] = 1
	return want, nil
}

// wantInstanceSeries is what the original's series of the instance read:
// Ready, its conditions as the composite has them, no auth.
func wantInstanceSeries(xr *unstructured.Unstructured) (map[string]float64, error) {
	last, err := lastReconciled(xr)
	if err != nil {
		return nil, err
	}
	id, _, _ := unstructured.NestedString(xr.Object, "status", "id")
	want := map[string]float64{
		"firebolt_instance_info{id=" + id + ",postgres_mode=internal}": 1,
		"firebolt_instance_last_reconciled_timestamp":                  last,
		"firebolt_instance_signing_key_generation":                     0,
		"firebolt_instance_signing_key_rotation_pending_seconds":       0,
		"firebolt_instance_signing_key_rotation_lagging_engines":       0,
	}
	for _, p := range []string{"Provisioning", "Ready", "Degraded", "Failed"} {
		want["firebolt_instance_status_phase{phase="+p+"}"] = 0
	}
	want["firebolt_instance_status_phase{phase=Ready}"] = 1
	for _, c := range []string{"Ready", "MetadataReady", "GatewayReady", "AuthReady", "EngineTLSReady", "GatewayTLSReady"} {
		v := 0.0
		if harness.Condition(xr, c).Status == "True" {
			v = 1
		}
		want["firebolt_instance_status_condition{type="+c+"}"] = v
	}
	for _, p := range []string{"Active", "ValidationOnly", "Removing"} {
		want["firebolt_instance_signing_keys{phase="+p+"}"] = 0
	}
	for _, st := range []string{"AwaitingPromotion", "AwaitingRetireAnchor", "AwaitingRemoval"} {
		want["firebolt_instance_signing_key_rotation_pending_step{step="+st+"}"] = 0
	}
	return want, nil
}
