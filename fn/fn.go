// Package fn is the gRPC face of the function: it decodes the request, picks
// the composer for the observed composite's kind and turns composer errors
// into fatal results. The composers hold all product logic.
package fn

import (
	"context"
	"fmt"
	"maps"
	"runtime/debug"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
	"github.com/firebolt-db/firebolt-crossplane/fn/metrics"
)

// A Composer composes one composite kind. It fills rsp (desired resources,
// desired composite status, conditions, results, requirements, TTL) through
// composite.Write and returns an error only for a real pipeline failure;
// anything a user can fix belongs in a condition.
type Composer interface {
	Compose(ctx context.Context, call composite.Call, rsp *fnv1.RunFunctionResponse) error
}

// Function is the composition function.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log       logging.Logger
	composers map[string]Composer
	metrics   metrics.Recorder
}

// An Option configures the Function.
type Option func(*Function)

// WithMetrics reports every call, and hands r to the default composers.
func WithMetrics(r metrics.Recorder) Option {
	return func(f *Function) { f.metrics = r }
}

// Kinds returns the composite kinds this function composes.
func Kinds() []string {
	kinds := make([]string, len(v1alpha1.Composites))
	for i, k := range v1alpha1.Composites {
		kinds[i] = k.Kind
	}
	return kinds
}

// New returns the function with a composer for every kind. kube may be nil
// (no cluster access); composers that need live signals then report that.
func New(log logging.Logger, kube corev1client.CoreV1Interface, o ...Option) *Function {
	f := NewWithComposers(log, nil, o...)
	f.composers = defaultComposers(kube, f.metrics)
	return f
}

// NewWithComposers returns the function with the given composers by kind.
func NewWithComposers(log logging.Logger, composers map[string]Composer, o ...Option) *Function {
	f := &Function{log: log, composers: composers, metrics: metrics.Nop{}}
	for _, fn := range o {
		fn(f)
	}
	return f
}

// RunFunction runs the function. One process serves every composite of
// every namespace, so a panic while composing one (a bug, or input nobody
// foresaw) is recovered and becomes a Fatal result for that composite
// alone; the process, and every other composite's next call, carry on.
func (f *Function) RunFunction(ctx context.Context, req *fnv1.RunFunctionRequest) (rsp *fnv1.RunFunctionResponse, err error) {
	tagged := newCallLogger(f.log, "tag", req.GetMeta().GetTag())
	var log logging.Logger = tagged
	kind, name := "", ""
	// Deferred first so it runs last and sees the response a panic left.
	start := time.Now()
	defer func() { f.metrics.Composed(kind, time.Since(start), rsp.GetResults()) }()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		// The stack is for the developer and may be long; the result
		// and the log line name the composite for the user.
		tagged.Info("Recovered from a panic while composing", "kind", kind, "name", name,
			"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		// Whatever the composer had written is incomplete: start over.
		rsp = respond(req)
		what := "cannot run function"
		if kind != "" {
			what = fmt.Sprintf("cannot compose %s %q", kind, name)
		}
		response.Fatal(rsp, errors.New(engine.BoundMessage(fmt.Sprintf("%s: the function panicked: %v", what, r))))
		err = nil
	}()
	rsp = respond(req)

	in := &v1beta1.Input{}
	if req.GetInput() != nil {
		// Decoded strictly, so a typo is refused rather than ignored. The
		// apimachinery converter names the field by its path, and its wording
		// does not change with the Go release the way encoding/json's does.
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(req.GetInput().AsMap(), in, true); err != nil {
			response.Fatal(rsp, errors.Wrap(err, "cannot decode function input"))
			return rsp, nil
		}
	}
	cfg, err := in.Resolve()
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "invalid function input"))
		return rsp, nil
	}

	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get observed composite resource"))
		return rsp, nil
	}
	kind, name = oxr.Resource.GetKind(), oxr.Resource.GetName()
	log = tagged.WithValues("kind", kind, "name", name)

	c, ok := f.composers[kind]
	if !ok {
		response.Fatal(rsp, errors.Errorf("cannot compose %s %q: this function composes only %s", kind, name, composedKinds()))
		return rsp, nil
	}
	// Kinds are dispatched by name; a kind of the same name in another
	// group is not ours.
	if k, known := v1alpha1.CompositeKindOf(kind); known {
		if g := oxr.Resource.GroupVersionKind().Group; g != k.Group {
			response.Fatal(rsp, errors.Errorf("cannot compose %s %q of group %q: this function composes %s of group %q", kind, name, g, kind, k.Group))
			return rsp, nil
		}
	}
	if err := c.Compose(ctx, composite.Call{Req: req, XR: oxr, Log: log, Config: cfg}, rsp); err != nil {
		log.Info("Cannot compose", "error", err)
		response.Fatal(rsp, errors.New(engine.BoundMessage(errors.Wrapf(err, "cannot compose %s %q", kind, name).Error())))
		return rsp, nil
	}
	log.Debug("Composed")
	return rsp, nil
}

// respond is response.To with a desired state of the response's own. The
// SDK's shares the request's, so what a composer writes would land in the
// request too, and the fresh start after a panic would find it there. The
// request's objects themselves are shared, not copied: nothing writes to
// them (a composer replaces the desired composite, never edits it).
func respond(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	rsp := response.To(req, response.DefaultTTL)
	if c := req.GetContext(); c != nil {
		// A composer may set a key of the pipeline context.
		rsp.Context = proto.Clone(c).(*structpb.Struct)
	}
	if d := req.GetDesired(); d != nil {
		rsp.Desired = &fnv1.State{Composite: d.GetComposite(), Resources: maps.Clone(d.GetResources())}
	}
	return rsp
}

// composedKinds lists the kinds of v1alpha1.Composites as a sentence.
func composedKinds() string {
	kinds := Kinds()
	last := len(kinds) - 1
	return strings.Join(kinds[:last], ", ") + " and " + kinds[last]
}
