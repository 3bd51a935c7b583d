package statemetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// The original operator's label values, in the order it lists them.
var (
	instancePhases = []v1alpha1.InstancePhase{v1alpha1.InstancePhaseProvisioning, v1alpha1.InstancePhaseReady, v1alpha1.InstancePhaseDegraded, v1alpha1.InstancePhaseFailed}
	// enginePhases are the original's six and updating, this product's
	// in-place (phased) update, which the original has not.
	enginePhases = []v1alpha1.EnginePhase{v1alpha1.EnginePhaseStable, v1alpha1.EnginePhaseCreating, v1alpha1.EnginePhaseSwitching,
		v1alpha1.EnginePhaseDraining, v1alpha1.EnginePhaseCleaning, v1alpha1.EnginePhaseStopped, v1alpha1.EnginePhaseUpdating}
	signingKeyPhases = []v1alpha1.SigningKeyPhase{v1alpha1.SigningKeyActive, v1alpha1.SigningKeyValidationOnly, v1alpha1.SigningKeyRemoving}
	rotationSteps    = []v1alpha1.RotationStep{v1alpha1.RotationAwaitingPromotion, v1alpha1.RotationAwaitingRetireAnchor, v1alpha1.RotationAwaitingRemoval}
	// engineConditions are the original's types; Ready reads EngineReady.
	engineConditions = []string{"Ready", "InstanceReady"}

	signingKeyPhase = map[v1alpha1.SigningKeyPhase]bool{}
)

func init() {
	for _, p := range signingKeyPhases {
		signingKeyPhase[p] = true
	}
}

// descs are the series' descriptions.
type descs struct {
	instancePhase, instanceCondition, instanceInfo, instanceReconciled           *prometheus.Desc
	keyGeneration, keys, pendingStep, pendingSeconds, lagging                    *prometheus.Desc
	enginePhase, engineCondition, specReplicas, activeGeneration                 *prometheus.Desc
	podsReady, podsTotal, drainingGeneration, engineReconciled, drainCheckErrors *prometheus.Desc
	exporting, untracked                                                         *prometheus.Desc
}

func newDescs() descs {
	inst := []string{"namespace", "name"}
	eng := []string{"namespace", "name", "instance"}
	d := func(name, help string, labels []string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append(append([]string{}, labels...), extra...), nil)
	}
	return descs{
		instancePhase:      d("firebolt_instance_status_phase", "The instance's status.phase: 1 on the series of its phase.", inst, "phase"),
		instanceCondition:  d("firebolt_instance_status_condition", "1 when the instance's condition of this type is True, else 0.", inst, "type"),
		instanceInfo:       d("firebolt_instance_info", "The instance's id (status.id) and PostgreSQL mode (internal, external); always 1.", inst, "id", "postgres_mode"),
		instanceReconciled: d("firebolt_instance_last_reconciled_timestamp", "Unix time of the instance's status.lastReconciled: when its status last changed.", inst),
		keyGeneration:      d("firebolt_instance_signing_key_generation", "How many signing keys the instance ever minted (status.auth.signingKeyGeneration); 0 without auth.", inst),
		keys:               d("firebolt_instance_signing_keys", "The instance's signing keys by phase.", inst, "phase"),
		pendingStep:        d("firebolt_instance_signing_key_rotation_pending_step", "1 on the rotation step the instance's signing keys wait for, if any.", inst, "step"),
		pendingSeconds:     d("firebolt_instance_signing_key_rotation_pending_seconds", "Seconds since the pending rotation step began; 0 when none is pending.", inst),
		lagging:            d("firebolt_instance_signing_key_rotation_lagging_engines", "Engines the pending rotation step waits for.", inst),
		enginePhase:        d("firebolt_engine_status_phase", "The engine's status.phase: 1 on the series of its phase.", eng, "phase"),
		engineCondition:    d("firebolt_engine_status_condition", "1 when the engine's condition of this type is True, else 0 (Ready reads EngineReady).", eng, "type"),
		specReplicas:       d("firebolt_engine_spec_replicas", "The replica count in effect: auto-stop's decision (status.autoStop.replicas) when it made one, else spec.replicas.", eng),
		activeGeneration:   d("firebolt_engine_active_generation", "The generation serving traffic; -1 before the first switch.", eng),
		podsReady:          d("firebolt_engine_pods_ready", "Ready pods of the engine's current generation (its StatefulSet's status.readyReplicas).", eng),
		podsTotal:          d("firebolt_engine_pods_total", "Pods of the engine's current generation (its StatefulSet's status.replicas).", eng),
		drainingGeneration: d("firebolt_engine_draining_generation", "The generation being drained; -1 when none.", eng),
		engineReconciled:   d("firebolt_engine_last_reconciled_timestamp", "Unix time of the engine's status.lastReconciled: when its status last changed.", eng),
		drainCheckErrors:   d("firebolt_engine_drain_check_errors_total", "Failed drain checks of the engine made by this process. Every function replica counts its own calls: sum by (namespace, name, instance).", eng),
		exporting: prometheus.NewDesc("function_firebolt_state_metrics_exporting",
			"1 when this process exports the firebolt_instance_* and firebolt_engine_* state series: it holds the state metrics Lease and its cache has synced.", nil, nil),
		untracked: prometheus.NewDesc("function_firebolt_state_metrics_untracked_objects",
			"Composites that have no state series: over the limit of tracked objects, without claim labels, or naming a claim another composite already names.", []string{"kind", "reason"}, nil),
	}
}

func (d descs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.instancePhase, d.instanceCondition, d.instanceInfo, d.instanceReconciled,
		d.keyGeneration, d.keys, d.pendingStep, d.pendingSeconds, d.lagging,
		d.enginePhase, d.engineCondition, d.specReplicas, d.activeGeneration,
		d.podsReady, d.podsTotal, d.drainingGeneration, d.engineReconciled, d.drainCheckErrors,
		d.exporting, d.untracked}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// pods is a generation's StatefulSet's pod counts.
type pods struct{ ready, total int32 }

// engineSeries sends one engine's series.
func (d descs) engineSeries(ch chan<- prometheus.Metric, e *engineState, p pods) {
	l := []string{e.claim.namespace, e.claim.name, e.instance}
	for _, ph := range enginePhases {
		gauge(ch, d.enginePhase, oneIf(e.phase == string(ph)), append(l, string(ph))...)
	}
	gauge(ch, d.engineCondition, oneIf(e.ready), append(l, engineConditions[0])...)
	gauge(ch, d.engineCondition, oneIf(e.instanceReady), append(l, engineConditions[1])...)
	gauge(ch, d.specReplicas, float64(e.replicas), l...)
	gauge(ch, d.activeGeneration, float64(e.active), l...)
	gauge(ch, d.podsReady, float64(p.ready), l...)
	gauge(ch, d.podsTotal, float64(p.total), l...)
	gauge(ch, d.drainingGeneration, float64(e.draining), l...)
	if !e.reconciled.IsZero() {
		gauge(ch, d.engineReconciled, float64(e.reconciled.Unix()), l...)
	}
}

// instanceSeries sends one instance's series; pending seconds count to now.
func (d descs) instanceSeries(ch chan<- prometheus.Metric, i *instanceState, now time.Time) {
	l := []string{i.claim.namespace, i.claim.name}
	for _, ph := range instancePhases {
		gauge(ch, d.instancePhase, oneIf(i.phase == string(ph)), append(l, string(ph))...)
	}
	for n, t := range instanceConditions {
		gauge(ch, d.instanceCondition, oneIf(i.conditions[n]), append(l, t)...)
	}
	mode := "internal"
	if i.external {
		mode = "external"
	}
	gauge(ch, d.instanceInfo, 1, append(l, i.id, mode)...)
	if !i.reconciled.IsZero() {
		gauge(ch, d.instanceReconciled, float64(i.reconciled.Unix()), l...)
	}
	gauge(ch, d.keyGeneration, float64(i.keyGeneration), l...)
	for _, ph := range signingKeyPhases {
		gauge(ch, d.keys, float64(i.keys[ph]), append(l, string(ph))...)
	}
	for _, s := range rotationSteps {
		gauge(ch, d.pendingStep, oneIf(i.pendingStep == string(s)), append(l, string(s))...)
	}
	pending := 0.0
	if i.pendingStep != "" && !i.pendingSince.IsZero() {
		pending = max(0, now.Sub(i.pendingSince).Seconds())
	}
	gauge(ch, d.pendingSeconds, pending, l...)
	gauge(ch, d.lagging, float64(i.lagging), l...)
}
