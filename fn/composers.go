package fn

import (
	"context"

	"k8s.io/client-go/kubernetes"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/fn/class"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance"
)

func defaultComposers(log logging.Logger, kube kubernetes.Interface) map[string]Composer {
	return map[string]Composer{
		KindEngine:      engine.New(log, engine.NewProber(kube), engine.NewEventLister(kube)),
		KindEngineClass: class.New(log),
		KindInstance:    instance.New(log),
	}
}

// notImplemented stands in for a composer that is not written yet: it says
// so on the composite and the claim and composes nothing.
type notImplemented struct{ condition string }

func (n notImplemented) Compose(_ context.Context, _ *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, _ v1beta1.Resolved) error {
	response.ConditionFalse(rsp, n.condition, "NotImplemented").
		WithMessage("this kind is not implemented yet by function-firebolt").
		TargetCompositeAndClaim()
	return nil
}
