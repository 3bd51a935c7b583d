package kubectlfirebolt

import "fmt"

func init() {
	register("version", "Print the plugin's version.", func() any { return &versionCmd{} })
}

type versionCmd struct{}

// Run prints the build version.
func (versionCmd) Run(e *Env) error {
	if err := e.outputs("version", outTable); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.Out, "kubectl-firebolt %s\n", Version)
	return err
}
