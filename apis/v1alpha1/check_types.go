package v1alpha1

// RolloutCheck is seed 004's check block: after a rollout step, wait
// InitialDelaySeconds for fresh data, then run Query every PeriodSeconds
// until SuccessThreshold checks in a row have succeeded. A check succeeds
// when the query returns data, and fails when it returns none or errors
// (the semantics of a Prometheus alert rule, inverted: the expression
// describes the healthy state).
type RolloutCheck struct {
	// InitialDelaySeconds to wait after a step (all pods available) before
	// the first check, so Prometheus can scrape the new pods.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`

	// PeriodSeconds between two checks.
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`

	// SuccessThreshold is how many consecutive successful checks let the
	// rollout take its next step.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	SuccessThreshold int32 `json:"successThreshold,omitempty"`

	// Query is the Prometheus instant query the check runs.
	Query PrometheusQuery `json:"query"`
}

// PrometheusQuery is an instant query against Prometheus's HTTP API.
type PrometheusQuery struct {
	// Expr is the PromQL expression. It should return data only while it is
	// safe to go on, such as sum(firebolt_running_queries) < 1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expr string `json:"expr"`

	// URL of the Prometheus server, without /api/v1/query, such as
	// http://prometheus.monitoring:9090. Without a scheme
	// (host[:port][/path], as prometheus.monitoring:9090) it is plain
	// HTTP. Redirects to another host are not followed.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?(:[0-9]{1,5})?(/[^?#@]*)?$') || (isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != '')",message="must be an http or https URL with a host, such as http://prometheus.monitoring:9090, or host[:port][/path], which is plain HTTP"
	// +kubebuilder:validation:XValidation:rule="!self.contains('?') && !self.contains('#')",message="must have no query or fragment: the function appends /api/v1/query"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-zA-Z][a-zA-Z0-9+.-]*://[^/]*@')",message="must not carry credentials: name a Secret in secretRef instead"
	URL string `json:"url"`

	// InsecureSkipVerify accepts any TLS certificate from the server.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`

	// SecretRef names a Secret in the claim's namespace holding the
	// credentials: key token for a bearer token, or keys username and
	// password for basic authentication. Its values are sent only to URL.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	SecretRef string `json:"secretRef,omitempty"`
}

// SchemelessPrometheusURL is the pattern of a PrometheusQuery URL without
// a scheme, which means plain HTTP; PrometheusQuery's schema rule holds the
// same pattern.
const SchemelessPrometheusURL = `^[a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?(:[0-9]{1,5})?(/[^?#@]*)?$`

// RollingPodPhase says what the step of a phased rollout is waiting for.
// +kubebuilder:validation:Enum=waitForPodToBeUpdated;waitForAllPodsToBeAvailable;waitForInitialDelay;waitForChecks;waitForDrain;prometheusError
type RollingPodPhase string

// What a phased rollout step waits for, with seed 004's names.
const (
	// RollingPodWaitForPodToBeUpdated: the pod rolled by the previous step
	// is not yet on the update revision.
	RollingPodWaitForPodToBeUpdated RollingPodPhase = "waitForPodToBeUpdated"
	// RollingPodWaitForAllPodsToBeAvailable: a pod is not available.
	RollingPodWaitForAllPodsToBeAvailable RollingPodPhase = "waitForAllPodsToBeAvailable"
	// RollingPodWaitForInitialDelay: initialDelaySeconds have not passed.
	RollingPodWaitForInitialDelay RollingPodPhase = "waitForInitialDelay"
	// RollingPodWaitForChecks: fewer than successThreshold checks in a row
	// have succeeded.
	RollingPodWaitForChecks RollingPodPhase = "waitForChecks"
	// RollingPodWaitForDrain: the checks passed, but the next pod to roll
	// still serves queries (engines only).
	RollingPodWaitForDrain RollingPodPhase = "waitForDrain"
	// RollingPodPrometheusError: the last check could not be run or read;
	// it counts as failed.
	RollingPodPrometheusError RollingPodPhase = "prometheusError"
)

// RollingPodStatus is the state of the current step of a phased rollout:
// the pod above Partition was the last one let go.
type RollingPodStatus struct {
	// Status is what the step waits for.
	Status RollingPodPhase `json:"status,omitempty"`

	// Partition of the StatefulSet during this step: pods with an ordinal
	// at or above it are on the update revision, or being moved to it.
	Partition int32 `json:"partition"`

	// AnalysisStartTime is when every pod was first seen available in this
	// step; the initial delay counts from it.
	// +optional
	AnalysisStartTime string `json:"analysisStartTime,omitempty"`

	// LastCheckTime is when the last check ran.
	// +optional
	LastCheckTime string `json:"lastCheckTime,omitempty"`

	// ConsecutiveSuccessfulChecks in this step.
	ConsecutiveSuccessfulChecks int32 `json:"consecutiveSuccessfulChecks"`

	// ConsecutiveFailedChecks in this step.
	ConsecutiveFailedChecks int32 `json:"consecutiveFailedChecks"`

	// TotalFailedChecks in this step.
	TotalFailedChecks int32 `json:"totalFailedChecks"`

	// LastCheckMessage says what the last check returned or why it failed,
	// without any credential.
	// +optional
	LastCheckMessage string `json:"lastCheckMessage,omitempty"`
}

// PhasedRolloutPhase is where a phased rollout stands, with seed 004's
// names.
// +kubebuilder:validation:Enum=rolling;updated;suspended
type PhasedRolloutPhase string

// Phases of a phased rollout.
const (
	// PhasedRolloutRolling: pods are being moved to the update revision,
	// one step at a time.
	PhasedRolloutRolling PhasedRolloutPhase = "rolling"
	// PhasedRolloutUpdated: every pod runs the update revision; the
	// partition holds the next change until it is checked.
	PhasedRolloutUpdated PhasedRolloutPhase = "updated"
	// PhasedRolloutSuspended: standardRollingUpdate is true; the
	// StatefulSet controller rolls on its own.
	PhasedRolloutSuspended PhasedRolloutPhase = "suspended"
)

// PhasedRolloutStatus is the state of a phased rollout, kept in the
// composite's status: the function keeps no timers, and every call decides
// from these fields.
type PhasedRolloutStatus struct {
	// Phase of the rollout.
	// +optional
	Phase PhasedRolloutPhase `json:"phase,omitempty"`

	// UpdateRevision is the StatefulSet revision being rolled out, or last
	// rolled out.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`

	// RolloutStartTime is when the rollout of UpdateRevision started.
	// +optional
	RolloutStartTime string `json:"rolloutStartTime,omitempty"`

	// RolloutEndTime is when it finished; unset while it runs.
	// +optional
	RolloutEndTime string `json:"rolloutEndTime,omitempty"`

	// RollingPodStatus is the current step; unset when nothing rolls.
	// +optional
	RollingPodStatus *RollingPodStatus `json:"rollingPodStatus,omitempty"`
}

// AnalysisStatus is the analysis of a new engine generation before the
// routing Service switches to it (spec.analysis): the same check as a
// phased rollout's step, run against the new generation's pods.
type AnalysisStatus struct {
	// Generation is the engine generation analysed.
	Generation int32 `json:"generation"`

	// Status is what the analysis waits for: its pods to be ready
	// (waitForAllPodsToBeAvailable), the initial delay, or the checks
	// (waitForChecks, prometheusError after a check that could not run).
	// +optional
	Status RollingPodPhase `json:"status,omitempty"`

	// Passed is true once successThreshold checks in a row succeeded: the
	// routing Service may switch to the generation.
	// +optional
	Passed bool `json:"passed,omitempty"`

	// AnalysisStartTime is when every pod of the generation was first seen
	// ready; the initial delay counts from it.
	// +optional
	AnalysisStartTime string `json:"analysisStartTime,omitempty"`

	// LastCheckTime is when the last check ran.
	// +optional
	LastCheckTime string `json:"lastCheckTime,omitempty"`

	// ConsecutiveSuccessfulChecks of this analysis.
	ConsecutiveSuccessfulChecks int32 `json:"consecutiveSuccessfulChecks"`

	// ConsecutiveFailedChecks of this analysis.
	ConsecutiveFailedChecks int32 `json:"consecutiveFailedChecks"`

	// TotalFailedChecks of this analysis.
	TotalFailedChecks int32 `json:"totalFailedChecks"`

	// LastCheckMessage says what the last check returned or why it failed,
	// without any credential.
	// +optional
	LastCheckMessage string `json:"lastCheckMessage,omitempty"`
}
