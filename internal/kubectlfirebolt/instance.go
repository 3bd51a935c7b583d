package kubectlfirebolt

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
)

func init() {
	register("instance", "Work with FireboltInstance claims.", func() any { return &instanceCmd{} })
}

// instanceCmd groups the instance commands.
type instanceCmd struct {
	List        instanceListCmd        `cmd:"" help:"List instances: NAME PHASE READY."`
	ID          instanceIDCmd          `cmd:"" name:"id" help:"Print an instance's metadata account id (status.id)."`
	PortForward instancePortForwardCmd `cmd:"" name:"port-forward" help:"Forward a local port to the instance's gateway (svc/<instance>-gateway port 80)."`
}

type instanceListCmd struct{}

// Run lists the instances of the namespace.
func (instanceListCmd) Run(e *Env) error {
	c, err := e.Clients()
	if err != nil {
		return err
	}
	items, err := listClaims(e.Ctx, c, instanceResource)
	if err != nil {
		return err
	}
	sortByName(items)
	return listing{
		kind:   gvrName(instanceResource),
		items:  items,
		header: []string{"NAME", "PHASE", "READY"},
		row: func(u unstructured.Unstructured) ([]string, []string, error) {
			i, err := readInstance(&u)
			if err != nil {
				return nil, nil, err
			}
			return []string{u.GetName(), orDash(string(i.Status.Phase)), i.Status.Conditions.ready()}, nil, nil
		},
	}.print(e, c.Namespace)
}

type instanceIDCmd struct {
	Name string `arg:"" help:"The instance."`
}

// Run prints the instance's account id.
func (cmd instanceIDCmd) Run(e *Env) error {
	c, err := e.begin("instance id", outTable)
	if err != nil {
		return err
	}
	i, err := e.instance(c, cmd.Name)
	if err != nil {
		return err
	}
	// status.id is the id in use; spec.id alone may be one the instance
	// refused because it already runs another.
	if i.Status.ID == "" {
		return errors.Errorf("fireboltinstance %q has no id yet: status.id is empty until the function first composes the instance", cmd.Name)
	}
	_, err = fmt.Fprintln(e.Out, i.Status.ID)
	return err
}

func sortByName(items []unstructured.Unstructured) {
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
}

type instancePortForwardCmd struct {
	Name      string `arg:"" help:"The instance."`
	LocalPort int    `name:"local-port" default:"0" help:"Local port to listen on; 0 picks a free one."`
}

// Run forwards to the instance's gateway until interrupted.
func (cmd instancePortForwardCmd) Run(e *Env) error {
	c, err := e.begin("instance port-forward", outTable)
	if err != nil {
		return err
	}
	if err := checkLocalPort(cmd.LocalPort); err != nil {
		return err
	}
	i, err := e.instance(c, cmd.Name)
	if err != nil {
		return err
	}
	return portForward(e, c, cmd.Name+"-gateway", gatewayPort, cmd.LocalPort, gatewayScheme(i))
}
