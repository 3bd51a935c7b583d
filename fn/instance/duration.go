package instance

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/function-sdk-go/errors"
)

// durationPart is one number and unit of an engine duration: Go's units
// plus d for days, a number possibly fractional.
var durationPart = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h|d)`)

// parseDuration reads the engine's duration grammar: Go durations plus d
// (24h), fractional and multi-part (1d12h, 1.5d), an optional sign.
func parseDuration(s string) (time.Duration, error) {
	if len(s) > 64 {
		return 0, errors.New("too long")
	}
	rest, sign := s, 1.0
	switch {
	case strings.HasPrefix(rest, "-"):
		rest, sign = rest[1:], -1
	case strings.HasPrefix(rest, "+"):
		rest = rest[1:]
	}
	if rest == "0" {
		return 0, nil
	}
	if rest == "" {
		return 0, errors.New("empty")
	}
	units := map[string]float64{
		"ns": float64(time.Nanosecond), "us": float64(time.Microsecond), "µs": float64(time.Microsecond), "ms": float64(time.Millisecond),
		"s": float64(time.Second), "m": float64(time.Minute), "h": float64(time.Hour), "d": float64(24 * time.Hour),
	}
	var total float64
	for rest != "" {
		m := durationPart.FindStringSubmatch(rest)
		if m == nil {
			return 0, errors.New("not a duration")
		}
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, err
		}
		total += n * units[m[2]]
		if total > float64(1<<62) {
			return 0, errors.New("too large")
		}
		rest = rest[len(m[0]):]
	}
	return time.Duration(sign * total), nil
}
