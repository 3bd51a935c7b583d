package fn

import (
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/class"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
	"github.com/firebolt-db/firebolt-crossplane/fn/phasedrollout"
	"github.com/firebolt-db/firebolt-crossplane/fn/phasedsts"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

// defaultComposers has a composer for every kind of v1alpha1.Composites.
func defaultComposers(kube corev1client.CoreV1Interface, m metrics.Recorder) map[string]Composer {
	return map[string]Composer{
		v1alpha1.XFireboltEngineKind: engine.New(engine.NewProber(kube, engine.WithProberMetrics(m)), engine.NewEventLister(kube),
			engine.WithMetrics(m), engine.WithChecker(promcheck.New())),
		v1alpha1.XFireboltEngineClassKind: class.New(),
		v1alpha1.XFireboltInstanceKind:    instance.New(),
		v1alpha1.XPhasedStatefulSetKind:   phasedsts.New(promcheck.New(), phasedsts.WithMetrics(m)),
		v1alpha1.XPhasedRolloutKind:       phasedrollout.New(promcheck.New(), phasedrollout.WithMetrics(m)),
	}
}
