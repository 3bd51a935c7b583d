package wakeagent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCapacity(t *testing.T) {
	type want struct {
		Capacity int
		Reason   string
	}
	cases := map[string]struct {
		env  map[string]string
		want want
	}{
		"Unset": {
			want: want{256, "ENVOY_MEMORY_LIMIT_BYTES unset: Envoy's memory limit unknown, hold capacity 256"},
		},
		"Empty": {
			env:  map[string]string{EnvoyMemoryLimitEnv: ""},
			want: want{256, "ENVOY_MEMORY_LIMIT_BYTES unset: Envoy's memory limit unknown, hold capacity 256"},
		},
		"Zero": {
			env:  map[string]string{EnvoyMemoryLimitEnv: "0"},
			want: want{256, `ENVOY_MEMORY_LIMIT_BYTES="0" is not a positive integer: hold capacity 256`},
		},
		"Negative": {
			env:  map[string]string{EnvoyMemoryLimitEnv: "-1"},
			want: want{256, `ENVOY_MEMORY_LIMIT_BYTES="-1" is not a positive integer: hold capacity 256`},
		},
		"Garbage": {
			env:  map[string]string{EnvoyMemoryLimitEnv: "512Mi"},
			want: want{256, `ENVOY_MEMORY_LIMIT_BYTES="512Mi" is not a positive integer: hold capacity 256`},
		},
		"Overflow": {
			env:  map[string]string{EnvoyMemoryLimitEnv: "99999999999999999999"},
			want: want{256, `ENVOY_MEMORY_LIMIT_BYTES="99999999999999999999" is not a positive integer: hold capacity 256`},
		},
		"OneGiB": {
			// A quarter, 256 MiB, at 2 MiB a hold.
			env:  map[string]string{EnvoyMemoryLimitEnv: "1073741824"},
			want: want{128, "ENVOY_MEMORY_LIMIT_BYTES=1073741824: a quarter of it at 2097152 bytes per hold, hold capacity 128"},
		},
		"TooSmallForOneHold": {
			// A quarter of 8 MiB - 1 is under 2 MiB: shed everything.
			env:  map[string]string{EnvoyMemoryLimitEnv: "8388607"},
			want: want{0, "ENVOY_MEMORY_LIMIT_BYTES=8388607: a quarter of it at 2097152 bytes per hold, hold capacity 0"},
		},
		"Capped": {
			env:  map[string]string{EnvoyMemoryLimitEnv: "9223372036854775807"},
			want: want{100000, "ENVOY_MEMORY_LIMIT_BYTES=9223372036854775807: a quarter of it at 2097152 bytes per hold, hold capacity 100000"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			c, reason := Capacity(lookup)
			if diff := cmp.Diff(tc.want, want{c, reason}); diff != "" {
				t.Errorf("Capacity (-want +got):\n%s", diff)
			}
		})
	}
}
