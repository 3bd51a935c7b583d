package kubectlfirebolt

import (
	"io"

	"k8s.io/cli-runtime/pkg/printers"
)

// terminalSafe is a writer that escapes what a terminal would obey (ESC,
// CR), as kubectl does: a claim's status, a pod's metrics and an API
// error are written by others, and a message holding an escape sequence
// must not retitle, clear or rewrite the terminal of whoever reads it.
// JSON and YAML never hold these bytes raw, so every format passes
// through it unchanged but for that.
type terminalSafe struct{ w io.Writer }

func (t terminalSafe) Write(p []byte) (int, error) {
	if err := printers.WriteEscaped(t.w, string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
