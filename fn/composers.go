package fn

import (
	"k8s.io/client-go/kubernetes"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/class"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
)

func defaultComposers(log logging.Logger, kube kubernetes.Interface) map[string]Composer {
	return map[string]Composer{
		v1alpha1.XFireboltEngineKind:      engine.New(log, engine.NewProber(kube), engine.NewEventLister(kube)),
		v1alpha1.XFireboltEngineClassKind: class.New(log),
		v1alpha1.XFireboltInstanceKind:    instance.New(log),
	}
}
