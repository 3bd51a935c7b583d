// Command scale measures what N engines cost the control plane: `make scale
// N=100`. On the local control plane of the end-to-end tests (in a private
// network namespace, KWOK pods) it creates N engines of one replica and
// class standard, waits until all are stable, edits the class so every
// engine rolls, waits until all are stable on the new generation, waits for
// steady state (no composite's circuit breaker open, no engine status
// change for -quiet), idles, and prints a markdown table: time to stable,
// API requests by resource and verb (the API server's
// apiserver_request_total, less the harness's own), the idle requests per
// engine per minute by resource and verb, CPU seconds per process, the
// function's peak memory and how often Crossplane's XR circuit breaker
// opened. With -auth the instance has spec.auth, and after the idle time a
// signing-key rotation is measured: its steps, and the function's calls for
// the instance, whose every call reads every engine's routing Service.
//
// Like the e2e tests it runs twice: the first copy builds what is missing
// while it can reach the module proxy, then runs itself again in a new
// network namespace, which starts the stack and measures. Every wait is
// bounded; every process of the stack dies with the copy that started it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/firebolt-db/firebolt-crossplane/test/e2e/harness"
)

// envWork carries the work directory to the copy in the namespace.
const envWork = "FIREBOLT_SCALE_WORK"

type config struct {
	engines       int
	createTimeout time.Duration
	editTimeout   time.Duration
	idle          time.Duration
	quiet         time.Duration
	steadyTimeout time.Duration
	out           string
	keep          bool
	// audit logs the API server's writes and reports them by writer.
	audit bool
	// crossplaneFlags are added to Crossplane's command line.
	crossplaneFlags stringList
	// profile, when set, is where a CPU profile of kube-apiserver over
	// profileFor from the create's start is written.
	profile    string
	profileFor time.Duration
	// auth gives the instance spec.auth and adds the signing-key rotation
	// phase, bounded by rotationTimeout.
	auth            bool
	rotationTimeout time.Duration
}

// maxEngines bounds N: every engine is a pod on the one simulated node,
// which holds harness.NodePods, and while an engine rolls it has the pods
// of two generations (the instance's pods need room too).
const maxEngines = 900

func main() {
	// The stack runs provider-kubernetes under a copy of this command (its
	// network namespace's bridge), before any flag is parsed.
	harness.MaybeRunBridge()
	var cfg config
	flag.IntVar(&cfg.engines, "n", 25, fmt.Sprintf("number of engines to create (1-%d)", maxEngines))
	flag.DurationVar(&cfg.createTimeout, "create-timeout", 0, "bound on creating the engines until all are stable (default 3m + 4s per engine)")
	flag.DurationVar(&cfg.editTimeout, "edit-timeout", 0, "bound on the class edit until all engines are stable again (default 3m + 4s per engine)")
	flag.DurationVar(&cfg.idle, "idle", 60*time.Second, "how long to measure the idle engines, from steady state")
	flag.DurationVar(&cfg.quiet, "quiet", 30*time.Second, "steady state: no engine's status changed for this long (and no circuit breaker open)")
	flag.DurationVar(&cfg.steadyTimeout, "steady-timeout", 8*time.Minute,
		"bound on waiting for steady state before idling (Crossplane's breaker stays open at least 5m); the idle time is measured anyway and marked NOT steady")
	flag.StringVar(&cfg.out, "out", "", "also write the markdown report to this file")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the work directory (logs, etcd data) of a run that succeeded")
	flag.BoolVar(&cfg.audit, "audit", false, "log kube-apiserver's writes (audit log, Metadata level) and add the writes per engine by writer to the report; logging costs the API server CPU, so time figures of such a run are not comparable")
	flag.StringVar(&cfg.profile, "profile", "", "write a CPU profile of kube-apiserver over the first -profile-for of the create to this file (go tool pprof)")
	flag.DurationVar(&cfg.profileFor, "profile-for", 60*time.Second, "how long -profile profiles")
	flag.Var(&cfg.crossplaneFlags, "crossplane-flag", "add a flag to Crossplane's command line, e.g. -crossplane-flag=--enable-realtime-compositions=false (repeatable; default: none, Crossplane's defaults)")
	flag.BoolVar(&cfg.auth, "auth", false, "give the instance spec.auth (cert-manager signing keys) and, after the idle time, measure a signing-key rotation")
	flag.DurationVar(&cfg.rotationTimeout, "rotation-timeout", 0, "bound on the signing-key rotation until every engine is stable on the last key set (default 4m + 10s per engine)")
	flag.Parse()
	if cfg.engines < 1 || cfg.engines > maxEngines {
		fmt.Fprintf(os.Stderr, "scale: -n must be between 1 and %d, got %d\n", maxEngines, cfg.engines)
		os.Exit(2)
	}
	if cfg.idle <= 0 || cfg.idle > time.Hour {
		fmt.Fprintf(os.Stderr, "scale: -idle must be more than 0 and at most 1h, got %s\n", cfg.idle)
		os.Exit(2)
	}
	if cfg.quiet < 0 || cfg.quiet > time.Hour || cfg.steadyTimeout < 0 || cfg.steadyTimeout > 2*time.Hour {
		fmt.Fprintf(os.Stderr, "scale: -quiet must be 0 to 1h and -steady-timeout 0 to 2h, got %s and %s\n", cfg.quiet, cfg.steadyTimeout)
		os.Exit(2)
	}
	def := 3*time.Minute + time.Duration(cfg.engines)*4*time.Second
	if cfg.createTimeout <= 0 {
		cfg.createTimeout = def
	}
	if cfg.editTimeout <= 0 {
		cfg.editTimeout = def
	}
	if cfg.rotationTimeout <= 0 {
		// A rotation rolls every engine three times, one step after
		// another, each step waiting for the instance to see every
		// engine done: measured, 200 s a roll at N = 100 and 90 s at
		// N = 20 beside a cold build (which overran 3 min + 6 s an
		// engine).
		cfg.rotationTimeout = 4*time.Minute + time.Duration(cfg.engines)*10*time.Second
	}
	if harness.InNetns() {
		os.Exit(inside(cfg))
	}
	os.Exit(outside(cfg))
}

// outside builds the tools, the function and the packages, then runs the
// measurement in a new network namespace and waits for it.
func outside(cfg config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "firebolt-scale-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "scale: building what is missing (a fresh machine compiles Kubernetes, etcd, KWOK and Crossplane once: 15-25 minutes)")
	err = harness.Reexec{Prog: "scale", Args: os.Args[1:], Work: work, WorkEnv: envWork}.Run(ctx)
	if err == nil && !cfg.keep {
		_ = os.RemoveAll(work)
		return 0
	}
	fmt.Fprintf(os.Stderr, "scale: logs and data kept in %s\n", work)
	code, exited := harness.ExitCode(err)
	if !exited {
		fmt.Fprintln(os.Stderr, "scale:", err)
	}
	return code
}

// inside starts the stack in this namespace, measures, prints the report
// and stops every process of the stack, also when interrupted.
func inside(cfg config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := measure(ctx, cfg, os.Getenv(envWork)); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		return 1
	}
	return 0
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, " ") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
