package autostop

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// The original operator's defaults (reference §3.1). The schema defaults the
// same values; the function applies them again because a composite can be
// created without its claim, and so without admission.
const (
	DefaultIdleReplicas int32 = 0
	DefaultIdleTimeout        = 30 * time.Minute
	DefaultPollInterval       = time.Minute

	// WakeTTL is how long a wake stamp keeps the engine awake. Not
	// configurable, as in the original: long enough to cover a cold start,
	// short enough that an abandoned request does not pin the engine.
	WakeTTL = 5 * time.Minute

	// MinPollInterval keeps a tiny pollInterval from turning the requeue
	// into a hot loop of function calls and scrapes (the schema refuses
	// less, as for drainCheckInterval).
	MinPollInterval = time.Second
)

// Resolve returns the autoStop that applies to an engine: the engine's own
// when it has one, else its class's. The fallback is whole-struct, as in the
// original: an engine's autoStop, even a disabled one, hides every field of
// the class's.
func Resolve(engine, class *v1alpha1.AutoStopSpec) *v1alpha1.AutoStopSpec {
	if engine != nil {
		return engine
	}
	return class
}

// params is an enabled autoStop with its defaults applied and its fields
// checked.
type params struct {
	active, idle int32
	idleTimeout  time.Duration
	pollInterval time.Duration
	schedule     Schedule
}

// newParams applies the defaults and checks again what admission checks: a
// composite can be created without its claim. A non-positive duration takes
// the default, as in the original, and a pollInterval under MinPollInterval
// is raised to it (the user asked for "poll often", which is what they get,
// as for drainCheckInterval). Replica counts and schedule windows have no
// safe reading when they are wrong, so they are refused, naming the field.
func newParams(fld *field.Path, s *v1alpha1.AutoStopSpec) (params, error) {
	p := params{
		active:       s.ActiveReplicas,
		idle:         DefaultIdleReplicas,
		idleTimeout:  DefaultIdleTimeout,
		pollInterval: DefaultPollInterval,
	}
	if s.IdleReplicas != nil {
		p.idle = *s.IdleReplicas
	}
	if s.IdleTimeout != nil && s.IdleTimeout.Duration > 0 {
		p.idleTimeout = s.IdleTimeout.Duration
	}
	if s.PollInterval != nil && s.PollInterval.Duration > 0 {
		p.pollInterval = max(s.PollInterval.Duration, MinPollInterval)
	}
	if p.active < 1 || p.active > v1alpha1.MaxEngineReplicas {
		return params{}, field.Invalid(fld.Child("activeReplicas"), p.active, fmt.Sprintf("must be between 1 and %d", v1alpha1.MaxEngineReplicas))
	}
	if p.idle < 0 || p.idle > p.active {
		return params{}, field.Invalid(fld.Child("idleReplicas"), p.idle, "must be between 0 and activeReplicas")
	}
	sched, err := ParseSchedule(fld.Child("schedule"), s.Schedule)
	if err != nil {
		return params{}, err
	}
	p.schedule = sched
	return p, nil
}
