package scale

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: Linux reports
// them in USER_HZ, which is 100 on every architecture it exports to user
// space.
const userHZ = 100

// CPUSeconds reads the user plus system CPU time from the contents of
// /proc/<pid>/stat. The command name (field 2) is in parentheses and may
// hold spaces or parentheses itself, so fields are counted from the last
// closing parenthesis.
func CPUSeconds(stat []byte) (float64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("cannot parse /proc/<pid>/stat: no command name in parentheses")
	}
	// After the name: field 3 (state) is the first; utime and stime are
	// fields 14 and 15.
	f := strings.Fields(string(stat[i+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return 0, errors.Errorf("cannot parse /proc/<pid>/stat: %d fields after the command name, want more than %d", len(f), stime)
	}
	var ticks uint64
	for _, j := range []int{utime, stime} {
		v, err := strconv.ParseUint(f[j], 10, 64)
		if err != nil {
			return 0, errors.Wrapf(err, "cannot parse field %d of /proc/<pid>/stat", j+3)
		}
		ticks += v
	}
	return float64(ticks) / userHZ, nil
}

// PeakRSSBytes reads VmHWM, the peak resident set size, from the contents of
// /proc/<pid>/status.
func PeakRSSBytes(status []byte) (int64, error) {
	for line := range strings.SplitSeq(string(status), "\n") {
		v, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, errors.Errorf("cannot parse VmHWM %q: want <number> kB", strings.TrimSpace(v))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, errors.Wrap(err, "cannot parse VmHWM")
		}
		return kb * 1024, nil
	}
	return 0, errors.New("/proc/<pid>/status has no VmHWM line")
}
