package wakeagent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLimiter(t *testing.T) {
	type call struct {
		engine string
		at     time.Duration
	}
	cases := map[string]struct {
		max   int
		calls []call
		want  []bool
	}{
		"OnePerInterval": {
			max:   10,
			calls: []call{{"e", 0}, {"e", time.Second}, {"e", 5*time.Second - 1}, {"e", 5 * time.Second}, {"e", 6 * time.Second}},
			want:  []bool{true, false, false, true, false},
		},
		"PerEngine": {
			max:   10,
			calls: []call{{"a", 0}, {"b", 0}, {"a", time.Second}, {"b", time.Second}},
			want:  []bool{true, true, false, false},
		},
		"ClockBackwards": {
			max:   10,
			calls: []call{{"e", 10 * time.Second}, {"e", 0}},
			want:  []bool{true, true},
		},
		"FullExpiresOldEntries": {
			max:   1,
			calls: []call{{"a", 0}, {"b", 5 * time.Second}, {"b", 6 * time.Second}},
			want:  []bool{true, true, false},
		},
		"FullOfRecentAllowsWithoutRemembering": {
			max:   1,
			calls: []call{{"a", 0}, {"b", time.Second}, {"b", 2 * time.Second}, {"a", 3 * time.Second}},
			want:  []bool{true, true, true, false},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := NewLimiter(5*time.Second, tc.max)
			got := make([]bool, 0, len(tc.calls))
			for _, c := range tc.calls {
				got = append(got, l.Allow(c.engine, t0.Add(c.at)))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Allow (-want +got):\n%s", diff)
			}
			if len(l.last) > tc.max {
				t.Errorf("limiter holds %d entries, bound %d", len(l.last), tc.max)
			}
		})
	}
}
