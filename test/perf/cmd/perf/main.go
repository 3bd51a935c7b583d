// Command perf builds the function and the no-op floor function
// (test/perf/cmd/floor), serves both on loopback, drives both over gRPC
// with the same request (a render example, by default the stable engine)
// and prints latency, throughput, CPU per call and resident memory, with
// the function/floor ratios. `make perf` runs it.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/test/perf"
)

type cli struct {
	Example     string        `default:"examples/render/engine-stable" help:"Render example whose request both functions serve."`
	Calls       int           `default:"2000" help:"Sequential calls per round (latency at concurrency 1)."`
	Concurrency int           `default:"8" help:"Concurrent callers for the throughput run."`
	Burst       int           `default:"4000" help:"Calls per round of the throughput run."`
	Warmup      int           `default:"300" help:"Calls before measuring each function."`
	Rounds      int           `default:"3" help:"Rounds; the two functions alternate within each, so both see the same machine."`
	Timeout     time.Duration `default:"10m" help:"Bound on the whole run."`
	Function    string        `type:"existingfile" help:"A function binary to measure instead of building ./cmd/function (e.g. an older build, for a before/after)."`
}

// server is a function process under test.
type server struct {
	name string
	cmd  *exec.Cmd
	conn *grpc.ClientConn
	call perf.Caller

	lat     []time.Duration
	rates   []float64
	calls   int
	cpu     time.Duration
	mem     perf.Memory
	metrics string
	// heap is the Go heap in use and obtained from the OS after the run,
	// from the process's own metrics.
	heap, heapSys float64
}

func main() {
	c := &cli{}
	kctx := kong.Parse(c, kong.Description("Measure the function against a no-op floor function over gRPC."))
	kctx.FatalIfErrorf(c.Run())
}

func (c *cli) Run() error {
	if c.Calls < 1 || c.Burst < 1 || c.Concurrency < 1 || c.Rounds < 1 || c.Warmup < 0 {
		return errors.New("--calls, --burst, --concurrency and --rounds must be positive, --warmup not negative")
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, c.Timeout)
	defer cancelTimeout()

	tmp, err := os.MkdirTemp("", "firebolt-perf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // best effort

	fnBin, floorBin, err := c.build(ctx, tmp)
	if err != nil {
		return err
	}

	ex, err := perf.LoadExample(c.Example)
	if err != nil {
		return err
	}

	fn, err := start(ctx, "function", fnBin, "--insecure")
	if err != nil {
		return err
	}
	defer fn.stop()
	req, err := ex.Request(ctx, fn.call)
	if err != nil {
		return errors.Wrap(err, "cannot build the request")
	}
	rsp, err := fn.call(ctx, req)
	if err != nil {
		return err
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return errors.Errorf("the function returned a fatal result: %s", r.GetMessage())
		}
	}
	canned, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
	if err != nil {
		return err
	}
	cannedPath := filepath.Join(tmp, "response.pb")
	if err := os.WriteFile(cannedPath, canned, 0o600); err != nil {
		return err
	}
	floor, err := start(ctx, "floor", floorBin, "--response", cannedPath)
	if err != nil {
		return err
	}
	defer floor.stop()

	fmt.Printf("Example %s: request %d bytes, response %d bytes, %d desired composed resources.\n",
		c.Example, proto.Size(req), len(canned), len(rsp.GetDesired().GetResources()))

	servers := []*server{fn, floor}
	for _, s := range servers {
		if _, err := perf.Sequential(ctx, s.call, req, c.Warmup); err != nil {
			return errors.Wrapf(err, "%s: warm-up", s.name)
		}
	}
	for r := range c.Rounds {
		order := servers
		if r%2 == 1 {
			order = []*server{floor, fn}
		}
		for _, s := range order {
			fmt.Printf("Round %d/%d: %s...\n", r+1, c.Rounds, s.name)
			if err := s.round(ctx, req, c); err != nil {
				return errors.Wrapf(err, "%s", s.name)
			}
		}
	}
	for _, s := range servers {
		if s.mem, err = perf.RSS(s.cmd.Process.Pid); err != nil {
			return err
		}
		if s.heap, s.heapSys, err = perf.Heap(ctx, s.metrics); err != nil {
			return errors.Wrapf(err, "%s", s.name)
		}
	}
	report(c, fn, floor)
	return nil
}

// round measures one round: latency at concurrency 1, then throughput;
// the CPU the process spent on both is added to its total.
func (s *server) round(ctx context.Context, req *fnv1.RunFunctionRequest, c *cli) error {
	before, err := perf.CPU(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	lat, err := perf.Sequential(ctx, s.call, req, c.Calls)
	if err != nil {
		return err
	}
	rate, err := perf.Concurrent(ctx, s.call, req, c.Burst, c.Concurrency)
	if err != nil {
		return err
	}
	after, err := perf.CPU(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	s.lat = append(s.lat, lat...)
	s.rates = append(s.rates, rate)
	s.calls += c.Calls + c.Burst
	s.cpu += after - before
	return nil
}

func report(c *cli, fn, floor *server) {
	median := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[len(s)/2]
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	row := func(what string, f, fl float64, unit, goal string) {
		fmt.Printf("%-32s %12.1f %12.1f %8.2fx  %s\n", what+" ("+unit+")", f, fl, f/fl, goal)
	}
	cpuPerCall := func(s *server) float64 { return us(s.cpu) / float64(s.calls) }
	fmt.Printf("\n%d rounds, %d sequential and %d calls at concurrency %d each; medians of rounds for calls/s.\n",
		c.Rounds, c.Calls, c.Burst, c.Concurrency)
	fmt.Printf("%-32s %12s %12s %9s  %s\n", "", "function", "floor", "ratio", "goal")
	row("p50 latency, concurrency 1", us(perf.Percentile(fn.lat, 50)), us(perf.Percentile(floor.lat, 50)), "µs", "<= 1.3x")
	row("p99 latency, concurrency 1", us(perf.Percentile(fn.lat, 99)), us(perf.Percentile(floor.lat, 99)), "µs", "")
	row(fmt.Sprintf("throughput, concurrency %d", c.Concurrency), median(fn.rates), median(floor.rates), "calls/s", ">= 0.8x")
	row("CPU per call", cpuPerCall(fn), cpuPerCall(floor), "µs", "")
	row("RSS after the run", mb(fn.mem.RSS), mb(floor.mem.RSS), "MiB", "<= 1.2x")
	row("  of it anonymous (RssAnon)", mb(fn.mem.Anon), mb(floor.mem.Anon), "MiB", "")
	row("  of it file-backed (RssFile)", mb(fn.mem.File), mb(floor.mem.File), "MiB", "")
	row("peak RSS", mb(fn.mem.Peak), mb(floor.mem.Peak), "MiB", "")
	row("Go heap in use after the run", fn.heap/(1<<20), floor.heap/(1<<20), "MiB", "")
	row("Go heap from the OS", fn.heapSys/(1<<20), floor.heapSys/(1<<20), "MiB", "")
}

// start runs a function binary on a free loopback port and waits, bounded,
// until it answers.
func start(ctx context.Context, name, bin string, args ...string) (*server, error) {
	addr, err := freeAddress(ctx)
	if err != nil {
		return nil, err
	}
	metrics, err := freeAddress(ctx)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "--address", addr, "--metrics-address", metrics)...)
	cmd.Stderr = os.Stderr
	// Killed with the harness, even when the harness itself is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, errors.Wrapf(err, "cannot start %s", name)
	}
	s := &server{name: name, cmd: cmd, metrics: metrics}
	s.conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		s.stop()
		return nil, err
	}
	client := fnv1.NewFunctionRunnerServiceClient(s.conn)
	s.call = func(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
		return client.RunFunction(ctx, req)
	}
	probe := &fnv1.RunFunctionRequest{}
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := client.RunFunction(cctx, probe, grpc.WaitForReady(true))
		cancel()
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return nil, errors.Wrapf(err, "%s did not answer within 30s", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) stop() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// build builds the floor, and the function unless --function names a
// prebuilt one, into dir.
func (c *cli) build(ctx context.Context, dir string) (fnBin, floorBin string, err error) {
	fmt.Println("Building the function and the floor...")
	fnBin, floorBin = filepath.Join(dir, "function"), filepath.Join(dir, "floor")
	build := map[string]string{fnBin: "./cmd/function", floorBin: "./test/perf/cmd/floor"}
	if c.Function != "" {
		fnBin = c.Function
		build = map[string]string{floorBin: "./test/perf/cmd/floor"}
	}
	for bin, pkg := range build {
		b := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
		b.Stdout, b.Stderr = os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			return "", "", errors.Wrapf(err, "cannot build %s", pkg)
		}
	}
	return fnBin, floorBin, nil
}

func freeAddress(ctx context.Context) (string, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close() //nolint:errcheck // only reserved the port
	return l.Addr().String(), nil
}
