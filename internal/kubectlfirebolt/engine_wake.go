package kubectlfirebolt

import (
	"fmt"
	"time"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/internal/wakestamp"
)

type engineWakeCmd struct {
	Name    string        `arg:"" help:"The engine."`
	Wait    bool          `help:"Then wait until the engine serves: stable and Ready, its spec in effect."`
	Timeout time.Duration `default:"10m" help:"How long --wait waits."`
}

// Run stamps the wake annotation, as the gateway's wake agent does when a
// query arrives for a stopped engine: auto-stop then runs the engine at
// activeReplicas and restarts its idle clock.
func (cmd engineWakeCmd) Run(e *Env) error {
	c, err := e.begin("engine wake", outTable, outName)
	if err != nil {
		return err
	}
	if err := checkTimeout(cmd.Timeout); err != nil {
		return err
	}
	// Read first: the reply says the server's time, which the stamp is
	// taken from (the function ignores a stamp off the cluster's clock).
	eng, err := e.engine(c, cmd.Name)
	if err != nil {
		return err
	}
	at := c.now()
	if err := (wakestamp.ClaimStamper{Client: c.Dynamic, Namespace: c.Namespace}).Stamp(e.Ctx, cmd.Name, at); err != nil {
		return notFound(err, engineResource, cmd.Name, c.Namespace)
	}
	if e.Globals.Output == outName {
		_, err = fmt.Fprintf(e.Out, "fireboltengine/%s\n", cmd.Name)
	} else {
		_, err = fmt.Fprintf(e.Out, "fireboltengine/%s: wake requested (%s=%s)\n", cmd.Name, autostop.WakeAnnotation, wakestamp.Value(at))
	}
	if err != nil {
		return err
	}

	if as := eng.Status.AutoStop; as == nil || as.Reason == string(autostop.ReasonDisabled) {
		if cmd.Wait && eng.Spec.Replicas == 0 {
			return errors.Errorf("fireboltengine/%s is stopped by spec.replicas 0, not by auto-stop: a wake cannot start it; set spec.replicas", cmd.Name)
		}
		if _, err := fmt.Fprintf(e.Err, "warning: auto-stop is not enabled on fireboltengine/%s: the stamp changes nothing, the engine runs spec.replicas (%d)\n", cmd.Name, eng.Spec.Replicas); err != nil {
			return err
		}
	}
	if !cmd.Wait {
		return nil
	}
	progress := e.Out
	if e.Globals.Output == outName {
		progress = e.Err
	}
	_, err = (&waiter{env: e, out: progress, clients: c, name: cmd.Name, timeout: cmd.Timeout, goal: serving}).run()
	return err
}
