package fn

import (
	"k8s.io/client-go/kubernetes"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/fn/class"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
)

func defaultComposers(log logging.Logger, kube kubernetes.Interface, m metrics.Recorder) map[string]Composer {
	return map[string]Composer{
		KindEngine: engine.New(log, engine.NewProber(kube, engine.WithProberMetrics(m)), engine.NewEventLister(kube),
			engine.WithMetrics(m)),
		KindEngineClass: class.New(log),
		KindInstance:    instance.New(log),
	}
}
