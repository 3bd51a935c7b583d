package perf

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// callTimeout bounds one call.
const callTimeout = 10 * time.Second

// CPU is a process's user plus system CPU time so far.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces: fields count from after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.Errorf("cannot parse /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// utime and stime are fields 14 and 15; f[0] is field 3.
	if len(f) < 13 {
		return 0, errors.Errorf("cannot parse /proc/%d/stat", pid)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, errors.Wrapf(err, "cannot parse /proc/%d/stat", pid)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// Memory is a process's resident set from /proc/<pid>/status, in bytes:
// VmRSS, its peak VmHWM, and VmRSS split into anonymous pages (heap, stacks)
// and file-backed pages (mostly the executable's own text and data).
type Memory struct {
	RSS, Peak, Anon, File int64
}

// RSS reads a process's Memory.
func RSS(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	fields := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.Peak, "RssAnon": &m.Anon, "RssFile": &m.File}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		dst, want := fields[k]
		if !ok || !want {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return Memory{}, errors.Wrapf(err, "cannot parse %s", k)
		}
		*dst = kb << 10
	}
	return m, nil
}

// Sequential makes n calls one after the other and returns each call's
// latency.
func Sequential(ctx context.Context, call Caller, req *fnv1.RunFunctionRequest, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := once(ctx, call, req); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// Concurrent makes n calls from c goroutines and returns the calls per
// second.
func Concurrent(ctx context.Context, call Caller, req *fnv1.RunFunctionRequest, n, c int) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, c)
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := once(ctx, call, req); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n) / elapsed.Seconds(), nil
}

func once(ctx context.Context, call Caller, req *fnv1.RunFunctionRequest) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	rsp, err := call(ctx, req)
	if err != nil {
		return err
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return errors.Errorf("fatal result: %s", r.GetMessage())
		}
	}
	return nil
}

// Percentile is the p-th percentile (0 < p <= 100) of ds, nearest rank.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// maxMetricsBytes bounds a metrics page read.
const maxMetricsBytes = 4 << 20

// Heap reads go_memstats_heap_inuse_bytes and go_memstats_heap_sys_bytes
// from a process's Prometheus endpoint at addr.
func Heap(ctx context.Context, addr string) (inuse, sys float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer rsp.Body.Close() //nolint:errcheck // read-only
	b, err := io.ReadAll(io.LimitReader(rsp.Body, maxMetricsBytes))
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for _, l := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		var into *float64
		switch name {
		case "go_memstats_heap_inuse_bytes":
			into = &inuse
		case "go_memstats_heap_sys_bytes":
			into = &sys
		default:
			continue
		}
		if *into, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return 0, 0, errors.Wrapf(err, "cannot parse %s", name)
		}
		found++
	}
	if found != 2 {
		return 0, 0, errors.Errorf("%s/metrics lacks go_memstats_heap_inuse_bytes or go_memstats_heap_sys_bytes", addr)
	}
	return inuse, sys, nil
}
