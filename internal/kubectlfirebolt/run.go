package kubectlfirebolt

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Version is the plugin's build version, set with -ldflags -X by the
// release build (hack/xpkg.sh).
var Version = "dev"

// Globals are the flags every command takes, as the original's.
type Globals struct {
	Namespace  string `short:"n" help:"Namespace of the claims; defaults to the kubeconfig context's namespace."`
	Context    string `help:"Kubeconfig context to use; defaults to the current context."`
	Kubeconfig string `help:"Path of the kubeconfig file; defaults to KUBECONFIG, then ~/.kube/config."`
	Output     string `short:"o" default:"table" enum:"table,wide,json,yaml,name" help:"Output format: table, wide, json, yaml or name."`
}

// Flags are the globals that choose the cluster and namespace.
func (g Globals) Flags() Flags {
	return Flags{Namespace: g.Namespace, Context: g.Context, Kubeconfig: g.Kubeconfig}
}

// command is one top-level command: its name, its help and a constructor
// of its kong struct (fresh per Run, so nothing parsed carries over).
type command struct {
	name, help string
	newCmd     func() any
}

var commands []command

// register adds a top-level command. Each command's file calls it from
// init, so adding a command touches no other file.
func register(name, help string, newCmd func() any) {
	commands = append(commands, command{name: name, help: help, newCmd: newCmd})
}

// Env is what a command runs with: its I/O, the global flags, and the
// clients, made on first use so that `version` and --help need no cluster.
type Env struct {
	Ctx     context.Context
	Out     io.Writer
	Err     io.Writer
	Globals *Globals

	newClients func(Flags) (Clients, error)
	clients    *Clients
}

// Clients returns the cluster clients, making them on the first call.
func (e *Env) Clients() (Clients, error) {
	if e.clients != nil {
		return *e.clients, nil
	}
	c, err := e.newClients(e.Globals.Flags())
	if err != nil {
		return Clients{}, err
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	e.clients = &c
	return c, nil
}

// outputs refuses an -o format the command does not print.
func (e *Env) outputs(cmd string, allowed ...string) error {
	for _, a := range allowed {
		if e.Globals.Output == a {
			return nil
		}
	}
	return errors.Errorf("-o %s: %s prints %s only", e.Globals.Output, cmd, strings.Join(allowed, ", "))
}

// begin is how a command that prints the formats allowed starts: it
// refuses any other -o, and makes the clients.
func (e *Env) begin(cmd string, allowed ...string) (Clients, error) {
	if err := e.outputs(cmd, allowed...); err != nil {
		return Clients{}, err
	}
	return e.Clients()
}

// engine reads the engine claim name.
func (e *Env) engine(c Clients, name string) (engineClaim, error) {
	u, err := getClaim(e.Ctx, c, engineResource, name)
	if err != nil {
		return engineClaim{}, err
	}
	return readEngine(u)
}

// instance reads the instance claim name.
func (e *Env) instance(c Clients, name string) (instanceClaim, error) {
	u, err := getClaim(e.Ctx, c, instanceResource, name)
	if err != nil {
		return instanceClaim{}, err
	}
	return readInstance(u)
}

// exitCode is what kong's exit hook panics with, so that --help returns
// from Run instead of ending the process.
type exitCode int

// Run runs the plugin with args (without the program name) and returns
// its exit status: 0, or 1 after printing the error on stderr.
// newClients makes the cluster clients from the global flags; NewClients
// is the real one.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, newClients func(Flags) (Clients, error)) (code int) {
	stdout, stderr = terminalSafe{stdout}, terminalSafe{stderr}
	var g Globals
	opts := make([]kong.Option, 0, 6+len(commands))
	opts = append(opts,
		kong.Name("kubectl firebolt"),
		kong.Description("Manage Firebolt instances and engines composed by firebolt-crossplane."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitCode(c)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Vars{"maxReplicas": strconv.Itoa(v1alpha1.MaxEngineReplicas)},
	)
	cmds := append([]command(nil), commands...)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	for _, c := range cmds {
		opts = append(opts, kong.DynamicCommand(c.name, c.help, "", c.newCmd()))
	}
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(exitCode)
			if !ok {
				panic(r)
			}
			code = int(c)
		}
	}()
	parser, err := kong.New(&g, opts...)
	if err != nil {
		return fail(stderr, err)
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		return fail(stderr, err)
	}
	env := &Env{Ctx: ctx, Out: stdout, Err: stderr, Globals: &g, newClients: newClients}
	if err := kctx.Run(env); err != nil {
		return fail(stderr, err)
	}
	return 0
}

func fail(stderr io.Writer, err error) int {
	_, _ = fmt.Fprintln(stderr, "error:", err)
	return 1
}
