package kubectlfirebolt

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

func init() {
	register("migrate", "Move a namespace (or all) from the original Firebolt operator to this product: its running instances and engines are adopted as claims, with no restart.", func() any { return &migrateCmd{} })
}

// migrateCmd moves from the original operator in seven steps, each of
// which can be run again: a migration interrupted anywhere completes when
// the same command is run again (docs/migration.md).
type migrateCmd struct {
	AllNamespaces   bool          `short:"A" name:"all-namespaces" help:"Migrate every namespace; without it, the namespace of -n or of the context."`
	DryRun          bool          `name:"dry-run" help:"Print every step and every object it would touch, and change nothing."`
	BackupDir       string        `name:"backup-dir" required:"" type:"path" help:"Directory the original's custom resources are saved to (spec and status, one file each) before anything is changed. A run again reads it: after step 5 it is the only copy."`
	Operator        string        `help:"The original operator's Deployment as namespace/name, when it is not labelled app.kubernetes.io/name=firebolt-operator."`
	OperatorStopped bool          `name:"operator-stopped" help:"The original operator is stopped already (scaled to 0, or uninstalled with its CRDs kept); do not look for it."`
	Timeout         time.Duration `default:"10m" help:"How long each wait may take: the operator's pods going, the original's objects going, this product's XRDs serving the claims."`
}

// The migration's steps, in order.
const (
	stepCheck = iota + 1
	stepStop
	stepSave
	stepRelease
	stepDelete
	stepWait
	stepApply
	stepCount = stepApply
)

var stepNames = map[int]string{
	stepCheck:   "check",
	stepStop:    "stop the original operator",
	stepSave:    "save the original's custom resources",
	stepRelease: "release what the original made",
	stepDelete:  "delete the original's custom resources and CRDs",
	stepWait:    "wait for this product's XRDs",
	stepApply:   "apply the claims",
}

// migration is one run of the command.
type migration struct {
	ctx context.Context
	c   Clients
	cmd migrateCmd
	out io.Writer
	// scope is the namespace migrated; "" is every namespace.
	scope string
	// live is what the original serves in scope now.
	live originals
	// saved is what the backup directory holds in scope.
	saved originals
}

// Run migrates.
func (cmd migrateCmd) Run(e *Env) error {
	c, err := e.begin("migrate", outTable)
	if err != nil {
		return err
	}
	if err := checkTimeout(cmd.Timeout); err != nil {
		return err
	}
	if c.Metadata == nil {
		return errors.New("migrate needs a metadata client")
	}
	if cmd.Operator != "" && cmd.OperatorStopped {
		return errors.New("--operator and --operator-stopped: give one or the other")
	}
	if cmd.Operator != "" {
		if _, _, err := splitOperator(cmd.Operator); err != nil {
			return err
		}
	}
	m := &migration{ctx: e.Ctx, c: c, cmd: cmd, out: e.Out}
	if !cmd.AllNamespaces {
		m.scope = c.Namespace
	}
	steps := []func() error{
		stepCheck:   m.check,
		stepStop:    m.stopOperator,
		stepSave:    m.save,
		stepRelease: m.release,
		stepDelete:  m.deleteOriginals,
		stepWait:    m.waitForXRDs,
		stepApply:   m.applyClaims,
	}
	for k := stepCheck; k <= stepCount; k++ {
		m.printf("step %d/%d: %s\n", k, stepCount, stepNames[k])
		if err := e.Ctx.Err(); err != nil {
			// Interrupted (Ctrl-C, a timeout): every step is safe to
			// run again, so the same command goes on from here.
			return errors.Wrapf(err, "interrupted before step %d/%d; run the same command again to go on", k, stepCount)
		}
		if err := steps[k](); err != nil {
			return errors.Wrapf(err, "step %d/%d (%s)", k, stepCount, stepNames[k])
		}
	}
	if cmd.DryRun {
		m.printf("dry run: nothing was changed\n")
		return nil
	}
	m.printf("migrated; follow each engine with: kubectl firebolt engine wait NAME\n")
	return nil
}

// printf writes a progress line; a failed write to the terminal is not a
// reason to stop a migration half way.
func (m *migration) printf(format string, args ...any) {
	_, _ = fmt.Fprintf(m.out, format, args...)
}

// would prints what a step does, or in a dry run would do.
func (m *migration) would(format string, args ...any) {
	if m.cmd.DryRun {
		m.printf("  would "+format+"\n", args...)
		return
	}
	m.printf("  "+format+"\n", args...)
}

// scopeName names the scope in messages.
func (m *migration) scopeName() string {
	if m.scope == "" {
		return "every namespace"
	}
	return fmt.Sprintf("namespace %q", m.scope)
}
