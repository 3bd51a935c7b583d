package harness

import (
	"context"
	"net"
	"time"
)

// StartWakeAgent runs the function binary's wake agent as the gateway pod
// would: with the token of the instance's gateway ServiceAccount (so the
// Role the instance composes is what it may do), in namespace ns, its /hold
// listener on holdAddress and its metrics on metricsAddress. The agent is
// the scenario's own: it is not one of the processes every scenario shares,
// so stopping it (the caller's job) never fails another scenario's checks.
func (c *Cluster) StartWakeAgent(ctx context.Context, ns, serviceAccount, holdAddress, metricsAddress string) (*Process, error) {
	kubeconfig := c.path("wake-agent-" + ns + "-kubeconfig")
	if err := c.serviceAccountKubeconfig(ctx, ns, serviceAccount, kubeconfig); err != nil {
		return nil, err
	}
	p := &Process{
		Name: "wake-agent-" + ns,
		Path: c.Tools.Function,
		Args: []string{"wake-agent", "--address=" + holdAddress, "--metrics-address=" + metricsAddress, "--debug"},
		Env:  []string{"KUBECONFIG=" + kubeconfig, "POD_NAMESPACE=" + ns},
		Log:  c.path("logs", "wake-agent-"+ns+".log"),
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	err := Wait(ctx, 30*time.Second, "the wake agent listening on "+holdAddress, func(ctx context.Context) (bool, string, error) {
		if ok, err := p.Running(); !ok {
			return false, "", err
		}
		d := net.Dialer{Timeout: time.Second}
		conn, err := d.DialContext(ctx, "tcp", holdAddress)
		if err != nil {
			return false, SeenErr(err), nil
		}
		_ = conn.Close()
		return true, "", nil
	})
	if err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}
