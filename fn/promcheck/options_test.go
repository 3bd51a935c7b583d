package promcheck

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// TestOptionDefaults shows what a Client without options, or with options
// below their range, uses.
func TestOptionDefaults(t *testing.T) {
	t.Parallel()
	for _, c := range []*Client{New(), New(WithTimeout(0), WithMaxBodyBytes(-1), WithLimiter(nil))} {
		if c.timeout != DefaultTimeout || c.maxBody != DefaultMaxBodyBytes || c.limiter != processLimiter {
			t.Errorf("Client uses timeout %s, body limit %d, own limiter %t; want the defaults",
				c.timeout, c.maxBody, c.limiter != processLimiter)
		}
	}
}

// TestServerTimeout shows the timeout sent to Prometheus is never shorter
// than the Client's and always parses as Prometheus's duration syntax.
func TestServerTimeout(t *testing.T) {
	cases := map[time.Duration]string{
		10 * time.Second:        "10s",
		1500 * time.Millisecond: "2s",
		90 * time.Second:        "1m30s",
		time.Hour:               "1h0m0s",
		100 * time.Millisecond:  "100ms",
		1500 * time.Microsecond: "2ms",
		time.Nanosecond:         "1ms",
	}
	for d, want := range cases {
		got := serverTimeout(d)
		if got.String() != want || got < d {
			t.Errorf("serverTimeout(%s) = %s, want %s", d, got, want)
		}
		if _, err := model.ParseDuration(got.String()); err != nil {
			t.Errorf("Prometheus cannot parse serverTimeout(%s) = %s: %v", d, got, err)
		}
	}
}
