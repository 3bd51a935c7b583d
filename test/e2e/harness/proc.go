package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

// flagDebug turns on debug logging in every program of the stack that has
// it: the logs are what a failed test has to go on.
const flagDebug = "--debug"

// stopGrace is how long a stopped process gets to exit after SIGTERM.
const stopGrace = 15 * time.Second

// A Process is one long-running binary of the control plane. It can be
// stopped, killed and started again with the same command line, which is
// what the crash-recovery scenario does to Crossplane and the function.
type Process struct {
	Name string
	Path string
	Args []string
	Env  []string
	Log  string
	// NewNetns starts it in a network namespace of its own, holding only a
	// loopback device it must bring up itself (the provider's bridge does).
	NewNetns bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	exited error
	starts int
}

// Start launches the process, appending its output to its log file. The
// process dies with the harness even when the harness is killed: the kernel
// sends it SIGKILL when its parent goes (Pdeathsig).
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			return errors.Errorf("%s is already running", p.Name)
		}
	}
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return errors.Wrapf(err, "cannot open the log of %s", p.Name)
	}
	p.starts++
	_, _ = fmt.Fprintf(f, "\n===== harness: start #%d of %s at %s\n", p.starts, p.Name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.Path, p.Args...) //nolint:noctx // Stop/Kill end it: SIGTERM with a grace period, which a context cannot give.
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if p.NewNetns {
		inNewNetns(cmd.SysProcAttr)
	}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return errors.Wrapf(err, "cannot start %s", p.Name)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() {
		err := cmd.Wait()
		_, _ = fmt.Fprintf(f, "\n===== harness: %s exited at %s: %v\n", p.Name, time.Now().Format(time.RFC3339Nano), err)
		_ = f.Close()
		p.mu.Lock()
		p.exited = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// Running reports whether the process is alive; if not, err says how it
// ended.
func (p *Process) Running() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false, errors.New("never started")
	}
	select {
	case <-p.done:
		return false, p.exited
	default:
		return true, nil
	}
}

// Pid is the process id of the running process, 0 when it is not running:
// the scale harness reads its CPU time and memory from /proc.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	select {
	case <-p.done:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// Kill ends the process abruptly (SIGKILL), as a crash would, and waits
// until it is gone.
func (p *Process) Kill() { p.signal(syscall.SIGKILL, 0) }

// Stop ends the process gracefully (SIGTERM), killing it if it outlives the
// grace period.
func (p *Process) Stop() { p.signal(syscall.SIGTERM, stopGrace) }

func (p *Process) signal(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	// The whole process group: a binary that forks helpers takes them along.
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	if grace > 0 {
		select {
		case <-done:
			return
		case <-time.After(grace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	<-done
}

// LogSize is the current length of the process's log, to show only what it
// logged after some point.
func (p *Process) LogSize() int64 {
	fi, err := os.Stat(p.Log)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// LogTail returns at most maxLines of the log, starting no earlier than
// byte offset from.
func (p *Process) LogTail(from int64, maxLines int) string {
	return p.LogLines(from, maxLines, nil)
}

// LogLines is LogTail of only the lines keep accepts; nil keeps all.
func (p *Process) LogLines(from int64, maxLines int, keep func(line string) bool) string {
	f, err := os.Open(p.Log)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.Log, err)
	}
	defer f.Close() //nolint:errcheck // Read only.
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return fmt.Sprintf("(cannot seek %s: %v)", p.Log, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.Log, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if keep != nil {
		kept := lines[:0]
		for _, l := range lines {
			if keep(string(l)) {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	skipped := 0
	if len(lines) > maxLines {
		skipped = len(lines) - maxLines
		lines = lines[skipped:]
	}
	var out bytes.Buffer
	if skipped > 0 {
		fmt.Fprintf(&out, "... (%d earlier lines in %s)\n", skipped, p.Log)
	}
	out.Write(bytes.Join(lines, []byte("\n")))
	return out.String()
}

// procs holds the processes in start order, so they stop in reverse.
type procs struct {
	mu     sync.Mutex
	order  []*Process
	byName map[string]*Process
	logs   string
}

func newProcs(logs string) *procs {
	return &procs{byName: map[string]*Process{}, logs: logs}
}

func (ps *procs) start(name, path string, args []string, env ...string) error {
	return ps.startProcess(&Process{Name: name, Path: path, Args: args, Env: env})
}

// startProcess starts p, logging to its name's log, and keeps it in start
// order.
func (ps *procs) startProcess(p *Process) error {
	p.Log = filepath.Join(ps.logs, p.Name+".log")
	ps.mu.Lock()
	ps.order = append(ps.order, p)
	ps.byName[p.Name] = p
	ps.mu.Unlock()
	return p.Start()
}

func (ps *procs) get(name string) *Process {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.byName[name]
}

func (ps *procs) all() []*Process {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]*Process(nil), ps.order...)
}

func (ps *procs) stopAll() {
	all := ps.all()
	for i := len(all) - 1; i >= 0; i-- {
		all[i].Stop()
	}
}

// exitedEarly returns an error naming the first process that is no longer
// running, with the end of its log: a wait that will never succeed because
// a component died should say so instead of timing out.
func (ps *procs) exitedEarly() error {
	for _, p := range ps.all() {
		if ok, err := p.Running(); !ok {
			return errors.Errorf("%s is not running (%v); end of %s:\n%s", p.Name, err, p.Log, p.LogTail(0, 30))
		}
	}
	return nil
}

// runOnce runs a short-lived command to completion under ctx and returns its
// combined output.
func runOnce(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := commandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return out, errors.Wrapf(err, "%s %v failed:\n%s", filepath.Base(name), args, out)
}

// commandContext is exec.CommandContext for a child that must not outlive
// the harness.
func commandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}
