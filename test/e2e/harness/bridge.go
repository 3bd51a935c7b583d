package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

// A program that binds fixed ports on every interface (provider-kubernetes:
// metrics on :8080, its webhook on :9443) cannot share the stack's network
// namespace, where Crossplane's RBAC manager holds :8080 and the function
// 127.0.0.1:9443. The harness runs such a program in a network namespace of
// its own, under a bridge: this same executable, started with EnvBridge set,
// which brings the namespace's loopback up, forwards connections between
// the two namespaces through Unix sockets (they live in the file system, so
// both namespaces reach them), starts the program, and exits with it.
//
// Every program that starts the harness re-executes itself as the bridge,
// so each calls MaybeRunBridge first thing in main (or TestMain).

// EnvBridge marks a process started as a bridge. Its value is the bridge's
// forwards, as JSON; its arguments are the program's command line.
const EnvBridge = "FIREBOLT_E2E_BRIDGE"

// Networks an Endpoint names.
const (
	netTCP  = "tcp"
	netUnix = "unix"
)

// Bounds of a forwarded connection's setup and of a forwarder's shutdown.
const (
	forwardDialTimeout = 5 * time.Second
	forwardCloseWait   = 5 * time.Second
	// bridgeSignalGrace is how long the bridge lets its program act on a
	// signal the harness sent to the whole process group before passing it
	// on: a controller-runtime manager exits at once, uncleanly, on a
	// second SIGTERM.
	bridgeSignalGrace = 2 * time.Second
)

// MaybeRunBridge runs this process as a bridge and exits when the harness
// started it as one; otherwise it returns at once.
func MaybeRunBridge() {
	spec, ok := os.LookupEnv(EnvBridge)
	if !ok {
		return
	}
	code, err := runBridge(spec, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bridge:", err)
	}
	os.Exit(code)
}

// An Endpoint is where a forward listens or dials: network "tcp" with
// host:port, or "unix" with a socket path.
type Endpoint struct {
	Network string `json:"network"`
	Address string `json:"address"`
}

func (e Endpoint) String() string { return e.Network + ":" + e.Address }

// A Forward copies every connection accepted at Listen to a new connection
// to Dial, both ways, until either side closes.
type Forward struct {
	Listen Endpoint `json:"listen"`
	Dial   Endpoint `json:"dial"`
}

// runBridge is the bridge: loopback up, forwards listening, then the
// program, whose exit status it returns.
func runBridge(spec string, argv []string) (int, error) {
	var forwards []Forward
	if err := json.Unmarshal([]byte(spec), &forwards); err != nil {
		return 2, errors.Wrapf(err, "cannot decode %s", EnvBridge)
	}
	if len(argv) == 0 {
		return 2, errors.New("no program to run")
	}
	_, nl, err := loopbackUp()
	if err != nil {
		return 1, err
	}
	nl.close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fws := make([]*forwarder, 0, len(forwards))
	defer func() {
		for _, fw := range fws {
			fw.Close()
		}
	}()
	for _, f := range forwards {
		fw, err := listenForward(ctx, f)
		if err != nil {
			return 1, err
		}
		fws = append(fws, fw)
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	// The command line is the one the harness that started the bridge gave
	// it: running it is the bridge's purpose.
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:noctx,gosec // Ended by the signals the harness sends and by Pdeathsig, never by a context's SIGKILL; argv is the harness's, not input.
	cmd.Env = withoutEnv(os.Environ(), EnvBridge)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// Not a process group of its own: the harness stops the bridge by
	// signalling its group, which takes the program along.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 1, errors.Wrapf(err, "cannot start %s", argv[0])
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitStatus(err), nil
	case s := <-sig:
		select {
		case err := <-done:
			return exitStatus(err), nil
		case <-time.After(bridgeSignalGrace):
			_ = cmd.Process.Signal(s)
		}
		// Bounded by the harness, which kills the group after its grace.
		return exitStatus(<-done), nil
	}
}

// exitStatus is a program's exit status; 1 when a signal ended it.
func exitStatus(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		return 1
	}
}

func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// A forwarder serves one Forward. Close ends its listener and every
// connection it holds, and waits (bounded) for its goroutines.
type forwarder struct {
	f      Forward
	l      net.Listener
	cancel context.CancelFunc

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// listenForward listens at f.Listen and serves it until Close. A Unix
// socket left by an earlier run is removed first.
func listenForward(ctx context.Context, f Forward) (*forwarder, error) {
	if f.Listen.Network == netUnix {
		if err := os.Remove(f.Listen.Address); err != nil && !os.IsNotExist(err) {
			return nil, errors.Wrapf(err, "cannot remove the stale socket %s", f.Listen.Address)
		}
	}
	l, err := (&net.ListenConfig{}).Listen(ctx, f.Listen.Network, f.Listen.Address)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot listen at %s", f.Listen)
	}
	fctx, cancel := context.WithCancel(ctx)
	fw := &forwarder{f: f, l: l, cancel: cancel, conns: map[net.Conn]struct{}{}}
	fw.wg.Add(1)
	go fw.accept(fctx)
	return fw, nil
}

func (fw *forwarder) accept(ctx context.Context) {
	defer fw.wg.Done()
	for {
		in, err := fw.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Transient (out of file descriptors): back off, or end on
			// Close.
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if !fw.track(in) {
			_ = in.Close()
			return
		}
		fw.wg.Add(1)
		go fw.pipe(ctx, in)
	}
}

// pipe connects in to a new connection to f.Dial and copies both ways. A
// side that reaches EOF half-closes the other, so the opposite direction
// can finish; both connections close once both directions have.
func (fw *forwarder) pipe(ctx context.Context, in net.Conn) {
	defer fw.wg.Done()
	defer fw.release(in)
	dctx, cancel := context.WithTimeout(ctx, forwardDialTimeout)
	out, err := (&net.Dialer{}).DialContext(dctx, fw.f.Dial.Network, fw.f.Dial.Address)
	cancel()
	if err != nil {
		return
	}
	if !fw.track(out) {
		_ = out.Close()
		return
	}
	defer fw.release(out)
	half := make(chan struct{})
	go func() {
		defer close(half)
		copyHalf(out, in)
	}()
	copyHalf(in, out)
	<-half
}

func copyHalf(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

func (fw *forwarder) track(c net.Conn) bool {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.closed {
		return false
	}
	fw.conns[c] = struct{}{}
	return true
}

func (fw *forwarder) release(c net.Conn) {
	fw.mu.Lock()
	delete(fw.conns, c)
	fw.mu.Unlock()
	_ = c.Close()
}

// Close stops accepting, closes every connection, and waits at most
// forwardCloseWait for the goroutines to end. A Unix listener removes its
// socket file.
func (fw *forwarder) Close() {
	fw.mu.Lock()
	fw.closed = true
	conns := make([]net.Conn, 0, len(fw.conns))
	for c := range fw.conns {
		conns = append(conns, c)
	}
	fw.mu.Unlock()
	fw.cancel()
	_ = fw.l.Close()
	for _, c := range conns {
		_ = c.Close()
	}
	ended := make(chan struct{})
	go func() {
		fw.wg.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(forwardCloseWait):
	}
}
