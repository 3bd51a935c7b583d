package autostop

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadStamp(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason string
		value  string
		want   stamp
	}{
		"Absent": {
			reason: "No annotation is no demand, and nothing to say.",
			want:   stamp{state: stampAbsent},
		},
		"Now": {
			reason: "A stamp of now is fresh.",
			value:  "2026-11-23T12:00:00Z",
			want:   stamp{state: stampFresh, message: "wake requested at 2026-11-23T12:00:00Z"},
		},
		"JustUnderTheTTL": {
			reason: "Fresh while now - stamp < 5m.",
			value:  "2026-11-23T11:55:00.000000001Z",
			want:   stamp{state: stampFresh, message: "wake requested at 2026-11-23T11:55:00Z"},
		},
		"AtTheTTL": {
			reason: "At exactly 5m the stamp is stale.",
			value:  "2026-11-23T11:55:00Z",
			want:   stamp{state: stampStale, message: `ignored the wake stamp firebolt.io/wake-requested="2026-11-23T11:55:00Z": older than 5m0s`},
		},
		"OtherZone": {
			reason: "An RFC 3339 offset is honoured: 13:58+02:00 is 11:58Z, fresh.",
			value:  "2026-11-23T13:58:00+02:00",
			want:   stamp{state: stampFresh, message: "wake requested at 2026-11-23T11:58:00Z"},
		},
		"Malformed": {
			reason: "A value that is not RFC 3339 is ignored, and the message says so.",
			value:  "yesterday",
			want:   stamp{state: stampMalformed, message: `ignored the wake stamp firebolt.io/wake-requested="yesterday": not an RFC 3339 time`},
		},
		"UnixSeconds": {
			reason: "Unix seconds are not RFC 3339.",
			value:  "1795435200",
			want:   stamp{state: stampMalformed, message: `ignored the wake stamp firebolt.io/wake-requested="1795435200": not an RFC 3339 time`},
		},
		"SmallSkewAhead": {
			reason: "A stamp a little ahead of the function's clock (skew) is fresh.",
			value:  "2026-11-23T12:04:59Z",
			want:   stamp{state: stampFresh, message: "wake requested at 2026-11-23T12:04:59Z"},
		},
		"FarFuture": {
			reason: "A stamp WakeTTL or more ahead would pin the engine awake until then; it is ignored.",
			value:  "2062-11-23T12:00:00Z",
			want:   stamp{state: stampFuture, message: `ignored the wake stamp firebolt.io/wake-requested="2062-11-23T12:00:00Z": more than 5m0s in the future`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := readStamp(tc.value, now)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(stamp{})); diff != "" {
				t.Errorf("%s\nreadStamp(%q): -want +got:\n%s", tc.reason, tc.value, diff)
			}
		})
	}
}

func TestReadStampHostile(t *testing.T) {
	// A huge value is refused without parsing and repeated clipped.
	v := "2026-11-23T12:00:00Z" + strings.Repeat(" ", 1<<20)
	got := readStamp(v, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	if got.state != stampMalformed || len(got.message) > 200 {
		t.Errorf("readStamp(1 MiB value) = state %d, message of %d bytes; want malformed, a short message", got.state, len(got.message))
	}
}
