package statemetrics

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
)

// world is a cluster with two engines and two instances that have series,
// and composites that must not: one without claim labels and one naming a
// claim another composite already names.
func world() fakes {
	return newFakes([]runtime.Object{
		xr(v1alpha1.XFireboltEngineKind, "demo-x1", "ns1", "demo", map[string]any{
			"spec": map[string]any{"instanceRef": "inst", "replicas": int64(3)},
			"status": map[string]any{
				"phase": "stable", "currentGeneration": int64(1), "activeGeneration": int64(1), "observedGeneration": int64(4),
				"lastReconciled": "2026-11-24T08:59:00Z",
				// Auto-stop runs it at 2: the original wrote that into
				// spec.replicas.
				"autoStop":   map[string]any{"replicas": int64(2), "reason": "ActivityObserved"},
				"renderings": []any{rendering(1)},
				"conditions": []any{cond("EngineReady", "True"), cond("InstanceReady", "True"), cond("Ready", "True")},
			},
		}),
		// The same claim, named by a composite made by hand: no series.
		xr(v1alpha1.XFireboltEngineKind, "demo-x2", "ns1", "demo", map[string]any{
			"spec": map[string]any{"instanceRef": "other", "replicas": int64(9)},
		}),
		xr(v1alpha1.XFireboltEngineKind, "rolling-x", "ns1", "rolling", map[string]any{
			"spec": map[string]any{"instanceRef": "inst", "replicas": int64(1)},
			"status": map[string]any{
				"phase": "draining", "currentGeneration": int64(3), "activeGeneration": int64(3), "drainingGeneration": int64(2),
				"renderings": []any{rendering(2), rendering(3)},
				"conditions": []any{cond("EngineReady", "False"), cond("InstanceReady", "Unknown")},
			},
		}),
		xr(v1alpha1.XFireboltEngineKind, "orphan", "", "", map[string]any{"spec": map[string]any{"instanceRef": "inst", "replicas": int64(1)}}),
		xr(v1alpha1.XFireboltInstanceKind, "inst-x", "ns1", "inst", map[string]any{
			"spec": map[string]any{"metadata": map[string]any{"postgres": map[string]any{"host": "pg.example.org"}}},
			"status": map[string]any{
				"phase": "Ready", "id": "acct-1", "lastReconciled": "2026-11-24T08:30:00Z",
				"auth": map[string]any{
					"signingKeyGeneration": int64(3),
					"signingKeys": []any{
						map[string]any{"id": "signing-1", "phase": "Removing"},
						map[string]any{"id": "signing-2", "phase": "Active"},
						map[string]any{"id": "signing-3", "phase": "ValidationOnly"},
					},
					"pendingRotationStep": "AwaitingRemoval", "pendingSince": "2026-11-24T08:58:20Z",
					"laggingEngines": []any{"rolling"}, "laggingEngineCount": int64(1),
				},
				"conditions": []any{cond("Ready", "True"), cond("MetadataReady", "True"), cond("GatewayReady", "True"),
					cond("AuthReady", "False"), cond("EngineTLSReady", "True")},
			},
		}),
		xr(v1alpha1.XFireboltInstanceKind, "plain-x", "ns2", "plain", map[string]any{
			"spec":   map[string]any{},
			"status": map[string]any{"phase": "Provisioning"},
		}),
	},
		// The current generation's StatefulSet counts; the old one's and a
		// stranger's do not.
		sts("ns1", "demo", 1, 2, 1), sts("ns1", "demo", 0, 3, 3), sts("ns2", "demo", 1, 5, 5))
}

const (
	exportingHelp = `# HELP function_firebolt_state_metrics_exporting 1 when this process exports the firebolt_instance_* and firebolt_engine_* state series: it holds the state metrics Lease and its cache has synced.
# TYPE function_firebolt_state_metrics_exporting gauge
`
	untrackedHelp = `# HELP function_firebolt_state_metrics_untracked_objects Composites that have no state series: over the limit of tracked objects, without claim labels, or naming a claim another composite already names.
# TYPE function_firebolt_state_metrics_untracked_objects gauge
`
	drainHelp = `# HELP firebolt_engine_drain_check_errors_total Failed drain checks of the engine made by this process. Every function replica counts its own calls: sum by (namespace, name, instance).
# TYPE firebolt_engine_drain_check_errors_total counter
`
)

// untrackedSeries is the untracked gauge: engines then instances, each
// over_limit, no_claim, duplicate_claim.
func untrackedSeries(e, i [3]int) string {
	var b strings.Builder
	b.WriteString(untrackedHelp)
	for kind, n := range map[string][3]int{"XFireboltEngine": e, "XFireboltInstance": i} {
		for r, reason := range []string{"over_limit", "no_claim", "duplicate_claim"} {
			b.WriteString(`function_firebolt_state_metrics_untracked_objects{kind="` + kind + `",reason="` + reason + `"} ` + strconv.Itoa(n[r]) + "\n")
		}
	}
	return b.String()
}

const demoSeries = `# HELP firebolt_engine_active_generation The generation serving traffic; -1 before the first switch.
# TYPE firebolt_engine_active_generation gauge
firebolt_engine_active_generation{instance="inst",name="demo",namespace="ns1"} 1
# HELP firebolt_engine_draining_generation The generation being drained; -1 when none.
# TYPE firebolt_engine_draining_generation gauge
firebolt_engine_draining_generation{instance="inst",name="demo",namespace="ns1"} -1
# HELP firebolt_engine_last_reconciled_timestamp Unix time of the engine's status.lastReconciled: when its status last changed.
# TYPE firebolt_engine_last_reconciled_timestamp gauge
firebolt_engine_last_reconciled_timestamp{instance="inst",name="demo",namespace="ns1"} 1795510740
# HELP firebolt_engine_pods_ready Ready pods of the engine's current generation (its StatefulSet's status.readyReplicas).
# TYPE firebolt_engine_pods_ready gauge
firebolt_engine_pods_ready{instance="inst",name="demo",namespace="ns1"} 1
# HELP firebolt_engine_pods_total Pods of the engine's current generation (its StatefulSet's status.replicas).
# TYPE firebolt_engine_pods_total gauge
firebolt_engine_pods_total{instance="inst",name="demo",namespace="ns1"} 2
# HELP firebolt_engine_spec_replicas The replica count in effect: auto-stop's decision (status.autoStop.replicas) when it made one, else spec.replicas.
# TYPE firebolt_engine_spec_replicas gauge
firebolt_engine_spec_replicas{instance="inst",name="demo",namespace="ns1"} 2
# HELP firebolt_engine_status_condition 1 when the engine's condition of this type is True, else 0 (Ready reads EngineReady).
# TYPE firebolt_engine_status_condition gauge
firebolt_engine_status_condition{instance="inst",name="demo",namespace="ns1",type="InstanceReady"} 1
firebolt_engine_status_condition{instance="inst",name="demo",namespace="ns1",type="Ready"} 1
# HELP firebolt_engine_status_phase The engine's status.phase: 1 on the series of its phase.
# TYPE firebolt_engine_status_phase gauge
firebolt_engine_status_phase{instance="inst",name="demo",namespace="ns1",phase="cleaning"} 0
firebolt_engine_status_phase{instance="inst",name="demo",namespace="ns1",phase="creating"} 0
firebolt_engine_status_phase{instance="inst",name="demo",namespace="ns1",phase="draining"} 0
firebolt_engine_status_phase{instance="inst",name="demo",namespace="ns1",phase="stable"} 1
firebolt_engine_status_phase{instance="inst",name="demo",namespace="ns1",phase="stopped"} 0
firebolt_engine_status_phase{instance="inst",name="demo",namespace="ns1",phase="switching"} 0
firebolt_engine_status_phase{instance="inst",name="demo",namespace="ns1",phase="updating"} 0
`

const rollingSeries = `firebolt_engine_active_generation{instance="inst",name="rolling",namespace="ns1"} 3
firebolt_engine_draining_generation{instance="inst",name="rolling",namespace="ns1"} 2
firebolt_engine_pods_ready{instance="inst",name="rolling",namespace="ns1"} 0
firebolt_engine_pods_total{instance="inst",name="rolling",namespace="ns1"} 0
firebolt_engine_spec_replicas{instance="inst",name="rolling",namespace="ns1"} 1
firebolt_engine_status_condition{instance="inst",name="rolling",namespace="ns1",type="InstanceReady"} 0
firebolt_engine_status_condition{instance="inst",name="rolling",namespace="ns1",type="Ready"} 0
firebolt_engine_status_phase{instance="inst",name="rolling",namespace="ns1",phase="cleaning"} 0
firebolt_engine_status_phase{instance="inst",name="rolling",namespace="ns1",phase="creating"} 0
firebolt_engine_status_phase{instance="inst",name="rolling",namespace="ns1",phase="draining"} 1
firebolt_engine_status_phase{instance="inst",name="rolling",namespace="ns1",phase="stable"} 0
firebolt_engine_status_phase{instance="inst",name="rolling",namespace="ns1",phase="stopped"} 0
firebolt_engine_status_phase{instance="inst",name="rolling",namespace="ns1",phase="switching"} 0
firebolt_engine_status_phase{instance="inst",name="rolling",namespace="ns1",phase="updating"} 0
`

const instSeries = `# HELP firebolt_instance_info The instance's id (status.id) and PostgreSQL mode (internal, external); always 1.
# TYPE firebolt_instance_info gauge
firebolt_instance_info{id="acct-1",name="inst",namespace="ns1",postgres_mode="external"} 1
# HELP firebolt_instance_last_reconciled_timestamp Unix time of the instance's status.lastReconciled: when its status last changed.
# TYPE firebolt_instance_last_reconciled_timestamp gauge
firebolt_instance_last_reconciled_timestamp{name="inst",namespace="ns1"} 1795509000
# HELP firebolt_instance_signing_key_generation How many signing keys the instance ever minted (status.auth.signingKeyGeneration); 0 without auth.
# TYPE firebolt_instance_signing_key_generation gauge
firebolt_instance_signing_key_generation{name="inst",namespace="ns1"} 3
# HELP firebolt_instance_signing_key_rotation_lagging_engines Engines the pending rotation step waits for.
# TYPE firebolt_instance_signing_key_rotation_lagging_engines gauge
firebolt_instance_signing_key_rotation_lagging_engines{name="inst",namespace="ns1"} 1
# HELP firebolt_instance_signing_key_rotation_pending_seconds Seconds since the pending rotation step began; 0 when none is pending.
# TYPE firebolt_instance_signing_key_rotation_pending_seconds gauge
firebolt_instance_signing_key_rotation_pending_seconds{name="inst",namespace="ns1"} 100
# HELP firebolt_instance_signing_key_rotation_pending_step 1 on the rotation step the instance's signing keys wait for, if any.
# TYPE firebolt_instance_signing_key_rotation_pending_step gauge
firebolt_instance_signing_key_rotation_pending_step{name="inst",namespace="ns1",step="AwaitingPromotion"} 0
firebolt_instance_signing_key_rotation_pending_step{name="inst",namespace="ns1",step="AwaitingRemoval"} 1
firebolt_instance_signing_key_rotation_pending_step{name="inst",namespace="ns1",step="AwaitingRetireAnchor"} 0
# HELP firebolt_instance_signing_keys The instance's signing keys by phase.
# TYPE firebolt_instance_signing_keys gauge
firebolt_instance_signing_keys{name="inst",namespace="ns1",phase="Active"} 1
firebolt_instance_signing_keys{name="inst",namespace="ns1",phase="Removing"} 1
firebolt_instance_signing_keys{name="inst",namespace="ns1",phase="ValidationOnly"} 1
# HELP firebolt_instance_status_condition 1 when the instance's condition of this type is True, else 0.
# TYPE firebolt_instance_status_condition gauge
firebolt_instance_status_condition{name="inst",namespace="ns1",type="AuthReady"} 0
firebolt_instance_status_condition{name="inst",namespace="ns1",type="EngineTLSReady"} 1
firebolt_instance_status_condition{name="inst",namespace="ns1",type="GatewayReady"} 1
firebolt_instance_status_condition{name="inst",namespace="ns1",type="GatewayTLSReady"} 0
firebolt_instance_status_condition{name="inst",namespace="ns1",type="MetadataReady"} 1
firebolt_instance_status_condition{name="inst",namespace="ns1",type="Ready"} 1
# HELP firebolt_instance_status_phase The instance's status.phase: 1 on the series of its phase.
# TYPE firebolt_instance_status_phase gauge
firebolt_instance_status_phase{name="inst",namespace="ns1",phase="Degraded"} 0
firebolt_instance_status_phase{name="inst",namespace="ns1",phase="Failed"} 0
firebolt_instance_status_phase{name="inst",namespace="ns1",phase="Provisioning"} 0
firebolt_instance_status_phase{name="inst",namespace="ns1",phase="Ready"} 1
`

const plainSeries = `firebolt_instance_info{id="",name="plain",namespace="ns2",postgres_mode="internal"} 1
firebolt_instance_signing_key_generation{name="plain",namespace="ns2"} 0
firebolt_instance_signing_key_rotation_lagging_engines{name="plain",namespace="ns2"} 0
firebolt_instance_signing_key_rotation_pending_seconds{name="plain",namespace="ns2"} 0
firebolt_instance_signing_key_rotation_pending_step{name="plain",namespace="ns2",step="AwaitingPromotion"} 0
firebolt_instance_signing_key_rotation_pending_step{name="plain",namespace="ns2",step="AwaitingRemoval"} 0
firebolt_instance_signing_key_rotation_pending_step{name="plain",namespace="ns2",step="AwaitingRetireAnchor"} 0
firebolt_instance_signing_keys{name="plain",namespace="ns2",phase="Active"} 0
firebolt_instance_signing_keys{name="plain",namespace="ns2",phase="Removing"} 0
firebolt_instance_signing_keys{name="plain",namespace="ns2",phase="ValidationOnly"} 0
firebolt_instance_status_condition{name="plain",namespace="ns2",type="AuthReady"} 0
firebolt_instance_status_condition{name="plain",namespace="ns2",type="EngineTLSReady"} 0
firebolt_instance_status_condition{name="plain",namespace="ns2",type="GatewayReady"} 0
firebolt_instance_status_condition{name="plain",namespace="ns2",type="GatewayTLSReady"} 0
firebolt_instance_status_condition{name="plain",namespace="ns2",type="MetadataReady"} 0
firebolt_instance_status_condition{name="plain",namespace="ns2",type="Ready"} 0
firebolt_instance_status_phase{name="plain",namespace="ns2",phase="Degraded"} 0
firebolt_instance_status_phase{name="plain",namespace="ns2",phase="Failed"} 0
firebolt_instance_status_phase{name="plain",namespace="ns2",phase="Provisioning"} 1
firebolt_instance_status_phase{name="plain",namespace="ns2",phase="Ready"} 0
`

// TestCollect reads the whole exposition of a collector over world: the
// leader's has every series, a standby's only what every replica exports,
// and a bound on tracked objects keeps the first by claim.
func TestCollect(t *testing.T) {
	cases := map[string]struct {
		reason  string
		leading bool
		max     int
		want    string
	}{
		"Leader": {
			reason:  "The Lease holder exports every engine's and instance's series, read from its cache.",
			leading: true,
			want: exportingHelp + "function_firebolt_state_metrics_exporting 1\n" +
				untrackedSeries([3]int{0, 1, 1}, [3]int{0, 0, 0}) +
				drainHelp +
				`firebolt_engine_drain_check_errors_total{instance="inst",name="demo",namespace="ns1"} 2` + "\n" +
				`firebolt_engine_drain_check_errors_total{instance="inst",name="rolling",namespace="ns1"} 1` + "\n" +
				demoSeries + rollingSeries + instSeries + plainSeries,
		},
		"Standby": {
			reason: "A replica without the Lease keeps its cache and exports only its own drain counts, so each state series has one source.",
			want: exportingHelp + "function_firebolt_state_metrics_exporting 0\n" +
				untrackedSeries([3]int{0, 1, 1}, [3]int{0, 0, 0}) +
				drainHelp +
				`firebolt_engine_drain_check_errors_total{instance="inst",name="demo",namespace="ns1"} 2` + "\n" +
				`firebolt_engine_drain_check_errors_total{instance="inst",name="rolling",namespace="ns1"} 1` + "\n",
		},
		"MaxObjects": {
			reason:  "Past the bound, composites have no series and are counted; every scrape keeps the same ones, the first by claim.",
			leading: true,
			max:     1,
			want: exportingHelp + "function_firebolt_state_metrics_exporting 1\n" +
				untrackedSeries([3]int{1, 1, 1}, [3]int{1, 0, 0}) +
				drainHelp +
				`firebolt_engine_drain_check_errors_total{instance="inst",name="demo",namespace="ns1"} 2` + "\n" +
				demoSeries + instSeries,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := &clock{t: epoch}
			o := []Option{WithClock(clk.now)}
			if tc.max > 0 {
				o = append(o, WithMaxObjects(tc.max))
			}
			c := start(t, world(), o...)
			c.SetLeading(tc.leading)
			for _, e := range []metrics.EngineRef{{Namespace: "ns1", Name: "demo"}, {Namespace: "ns1", Name: "demo"}, {Namespace: "ns1", Name: "rolling"}, {Namespace: "ns9", Name: "ghost"}} {
				c.DrainCheckFailed(e)
			}
			if err := testutil.CollectAndCompare(c, strings.NewReader(tc.want)); err != nil {
				t.Errorf("%s\n%v", tc.reason, err)
			}
		})
	}
}

// TestCollectBeforeSync: a cache that has not listed yet would read as
// engines that vanished, so nothing but the exporting gauge, at 0, is
// sent.
func TestCollectBeforeSync(t *testing.T) {
	w := world()
	c, err := New(w.dyn, w.apps())
	if err != nil {
		t.Fatal(err)
	}
	c.SetLeading(true)
	if err := testutil.CollectAndCompare(c, strings.NewReader(exportingHelp+"function_firebolt_state_metrics_exporting 0\n")); err != nil {
		t.Error(err)
	}
}

// TestDeletedEngineSeriesGo: once the informer sees an engine deleted, its
// series and its drain count are gone; a count for an engine the cache
// never held is kept for a grace period only.
func TestDeletedEngineSeriesGo(t *testing.T) {
	f := world()
	clk := &clock{t: epoch}
	c := start(t, f, WithClock(clk.now))
	c.SetLeading(true)
	c.DrainCheckFailed(metrics.EngineRef{Namespace: "ns1", Name: "rolling"})
	c.DrainCheckFailed(metrics.EngineRef{Namespace: "ns3", Name: "late"})

	ctx := context.Background()
	for _, name := range []string{"rolling-x", "demo-x1", "demo-x2", "orphan"} {
		if err := f.dyn.Resource(EnginesResource).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"plain-x"} {
		if err := f.dyn.Resource(InstancesResource).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the deletions in the cache", func() bool {
		return len(c.engines.GetStore().List()) == 0 && len(c.instances.GetStore().List()) == 1
	})
	if err := testutil.CollectAndCompare(c, strings.NewReader(exportingHelp+"function_firebolt_state_metrics_exporting 1\n"+
		untrackedSeries([3]int{0, 0, 0}, [3]int{0, 0, 0})+instSeries)); err != nil {
		t.Error(err)
	}
	create := func(name, claimNS, claimName string) {
		t.Helper()
		if _, err := f.dyn.Resource(EnginesResource).Create(ctx, xr(v1alpha1.XFireboltEngineKind, name, claimNS, claimName, map[string]any{
			"spec": map[string]any{"instanceRef": "inst", "replicas": int64(1)},
		}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	drains := func(want string) {
		t.Helper()
		if err := testutil.CollectAndCompare(c, strings.NewReader(drainHelp+want), "firebolt_engine_drain_check_errors_total"); err != nil {
			t.Error(err)
		}
	}

	// An engine made again under the deleted one's claim starts over.
	create("rolling-y", "ns1", "rolling")
	waitFor(t, "the recreated engine in the cache", func() bool { return len(c.engines.GetStore().List()) == 1 })
	drains(`firebolt_engine_drain_check_errors_total{instance="inst",name="rolling",namespace="ns1"} 0` + "\n")

	// The count of "late", which no engine held, is gone once the grace
	// has passed, so the engine made after it starts from zero.
	clk.advance(drainGrace + time.Second)
	drains(`firebolt_engine_drain_check_errors_total{instance="inst",name="rolling",namespace="ns1"} 0` + "\n")
	create("late-x", "ns3", "late")
	waitFor(t, "the late engine in the cache", func() bool { return len(c.engines.GetStore().List()) == 2 })
	drains(`firebolt_engine_drain_check_errors_total{instance="inst",name="late",namespace="ns3"} 0` + "\n" +
		`firebolt_engine_drain_check_errors_total{instance="inst",name="rolling",namespace="ns1"} 0` + "\n")

	// Within the grace a count waits for its engine: a check can run on a
	// call that beat the engine's watch event.
	c.DrainCheckFailed(metrics.EngineRef{Namespace: "ns4", Name: "early"})
	drains(`firebolt_engine_drain_check_errors_total{instance="inst",name="late",namespace="ns3"} 0` + "\n" +
		`firebolt_engine_drain_check_errors_total{instance="inst",name="rolling",namespace="ns1"} 0` + "\n")
	create("early-x", "ns4", "early")
	waitFor(t, "the early engine in the cache", func() bool { return len(c.engines.GetStore().List()) == 3 })
	drains(`firebolt_engine_drain_check_errors_total{instance="inst",name="early",namespace="ns4"} 1` + "\n" +
		`firebolt_engine_drain_check_errors_total{instance="inst",name="late",namespace="ns3"} 0` + "\n" +
		`firebolt_engine_drain_check_errors_total{instance="inst",name="rolling",namespace="ns1"} 0` + "\n")
}
