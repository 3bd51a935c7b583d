package engine

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// DefaultDrainCheckInterval is the drain poll interval when neither the
// engine nor its class sets one.
const DefaultDrainCheckInterval = 5 * time.Second

// MinDrainCheckInterval is the shortest drain poll interval. Admission
// refuses shorter ones, but an object stored before that rule, or written
// around it, can still carry one; it is raised to this rather than
// refused, because the user asked for "poll often", which is what they
// get, and a condition would only add noise to a rollout in progress.
const MinDrainCheckInterval = time.Second

// Policy is the rollout policy, resolved engine → class → default. It is
// read live on every call and is not part of a generation's rendering, so a
// change never rolls pods.
type Policy struct {
	Rollout            v1alpha1.RolloutStrategy
	DrainCheckEnabled  bool
	DrainCheckInterval time.Duration
}

// drainSkipped says why old generations do not wait for the drain check;
// "" when they do. The one place that decides it.
func (p Policy) drainSkipped() string {
	switch {
	case p.Rollout == v1alpha1.RolloutRecreate:
		return "rollout is recreate"
	case !p.DrainCheckEnabled:
		return "the drain check is disabled"
	}
	return ""
}

// drainChecked reports whether old generations wait for the drain check.
func (p Policy) drainChecked() bool { return p.drainSkipped() == "" }

// effectivePolicy resolves the policy. A class that is missing contributes
// nothing: an in-flight rollout must not stall on it.
func effectivePolicy(spec v1alpha1.FireboltEngineSpec, class *v1alpha1.FireboltEngineClassSpec) Policy {
	p := Policy{Rollout: v1alpha1.RolloutGraceful, DrainCheckEnabled: true, DrainCheckInterval: DefaultDrainCheckInterval}
	if class != nil {
		p = p.overlay(class.Rollout, class.DrainCheckEnabled, class.DrainCheckInterval)
	}
	p = p.overlay(spec.Rollout, spec.DrainCheckEnabled, spec.DrainCheckInterval)
	p.DrainCheckInterval = max(p.DrainCheckInterval, MinDrainCheckInterval)
	return p
}

// overlay is p with the fields one level (class, then engine) sets.
func (p Policy) overlay(rollout v1alpha1.RolloutStrategy, drainCheck *bool, interval *metav1.Duration) Policy {
	if rollout != "" {
		p.Rollout = rollout
	}
	if drainCheck != nil {
		p.DrainCheckEnabled = *drainCheck
	}
	if interval != nil && interval.Duration > 0 {
		p.DrainCheckInterval = interval.Duration
	}
	return p
}

// classSpec is the class's spec when it was found, else nil.
func (in Inputs) classSpec() *v1alpha1.FireboltEngineClassSpec {
	if in.Class.Name == "" || !in.Class.Found || in.Class.Err != "" {
		return nil
	}
	return &in.Class.Spec
}

// effectiveStorage is the engine's storage if it names a backend, else the
// class's, else an emptyDir.
func effectiveStorage(spec v1alpha1.FireboltEngineSpec, class *v1alpha1.FireboltEngineClassSpec) v1alpha1.EngineStorageSpec {
	if hasBackend(spec.Storage) {
		return spec.Storage
	}
	if class != nil && hasBackend(class.Storage) {
		return class.Storage
	}
	return v1alpha1.EngineStorageSpec{EmptyDir: &v1alpha1.EmptyDirStorageSpec{}}
}

func hasBackend(s v1alpha1.EngineStorageSpec) bool {
	return s.PersistentVolumeClaim != nil || s.EmptyDir != nil || s.HostPath != nil
}

// effectiveUISidecar is engine → class → false.
func effectiveUISidecar(spec v1alpha1.FireboltEngineSpec, class *v1alpha1.FireboltEngineClassSpec) bool {
	if spec.UISidecar != nil {
		return *spec.UISidecar
	}
	if class != nil && class.UISidecar != nil {
		return *class.UISidecar
	}
	return false
}
