package kubectlfirebolt

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

func init() {
	register("engine", "Work with FireboltEngine claims.", func() any { return &engineCmd{} })
}

// engineCmd groups the engine commands; each lives in a file of its own.
type engineCmd struct {
	List        engineListCmd        `cmd:"" help:"List engines: NAME INSTANCE PHASE READY (wide: CLASS REPLICAS)."`
	Create      engineCreateCmd      `cmd:"" help:"Create or update an engine (server-side apply) and wait until it is ready."`
	Delete      engineDeleteCmd      `cmd:"" help:"Delete an engine and wait until it is gone; a missing one is not an error."`
	Wait        engineWaitCmd        `cmd:"" help:"Wait until the engine's spec is in effect: observedGeneration caught up, stable and Ready, or stopped."`
	Wake        engineWakeCmd        `cmd:"" help:"Ask auto-stop to wake a stopped engine, as the gateway does for a query."`
	Status      engineStatusCmd      `cmd:"" help:"Show where an engine's rollout stands, why it is not ready, and what to do next."`
	PortForward enginePortForwardCmd `cmd:"" name:"port-forward" help:"Forward a local port to the engine's query port (svc/<engine>-service port 3473)."`
}

type engineListCmd struct {
	Instance string `help:"Only the engines of this instance."`
}

// Run lists the engines of the namespace.
func (cmd engineListCmd) Run(e *Env) error {
	c, err := e.Clients()
	if err != nil {
		return err
	}
	all, err := listClaims(e.Ctx, c, engineResource)
	if err != nil {
		return err
	}
	items := all[:0]
	for _, u := range all {
		ref, _, _ := unstructured.NestedString(u.Object, "spec", "instanceRef")
		if cmd.Instance == "" || ref == cmd.Instance {
			items = append(items, u)
		}
	}
	sortByName(items)
	return listing{
		kind:       gvrName(engineResource),
		items:      items,
		header:     []string{"NAME", "INSTANCE", "PHASE", "READY"},
		wideHeader: []string{"CLASS", "REPLICAS"},
		row: func(u unstructured.Unstructured) ([]string, []string, error) {
			eng, err := readEngine(&u)
			if err != nil {
				return nil, nil, err
			}
			class := ""
			if eng.Spec.EngineClassRef != nil {
				class = *eng.Spec.EngineClassRef
			}
			return []string{u.GetName(), eng.Spec.InstanceRef, orDash(string(eng.Status.Phase)), eng.Status.Conditions.ready()},
				[]string{orDash(class), strconv.Itoa(int(eng.Spec.Replicas))}, nil
		},
	}.print(e, c.Namespace)
}

type enginePortForwardCmd struct {
	Name      string `arg:"" help:"The engine."`
	LocalPort int    `name:"local-port" default:"0" help:"Local port to listen on; 0 picks a free one."`
}

// Run forwards to the engine's routing Service until interrupted.
func (cmd enginePortForwardCmd) Run(e *Env) error {
	c, err := e.begin("engine port-forward", outTable)
	if err != nil {
		return err
	}
	if err := checkLocalPort(cmd.LocalPort); err != nil {
		return err
	}
	eng, err := e.engine(c, cmd.Name)
	if err != nil {
		return err
	}
	// The scheme is the instance's business (engine TLS is an instance
	// setting); without the instance it cannot be told.
	scheme := ""
	if i, err := e.instance(c, eng.Spec.InstanceRef); err == nil {
		scheme = engineScheme(i, cmd.Name)
	} else if _, werr := fmt.Fprintf(e.Err, "warning: the scheme is not known (%v): the engine speaks https when its instance has engine TLS on\n", err); werr != nil {
		return werr
	}
	return portForward(e, c, contract.RoutingService(cmd.Name), enginePort, cmd.LocalPort, scheme)
}
