package fn

import (
	"k8s.io/client-go/kubernetes"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/class"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
)

// defaultComposers has a composer for every kind of v1alpha1.Composites.
func defaultComposers(kube kubernetes.Interface) map[string]Composer {
	return map[string]Composer{
		v1alpha1.XFireboltEngineKind:      engine.New(engine.NewProber(kube), engine.NewEventLister(kube)),
		v1alpha1.XFireboltEngineClassKind: class.New(),
		v1alpha1.XFireboltInstanceKind:    instance.New(),
	}
}
