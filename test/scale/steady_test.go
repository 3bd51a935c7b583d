package scale

import (
	"testing"
	"time"
)

func TestSteady(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	quiet := 30 * time.Second
	cases := map[string]struct {
		cs   []Composite
		want bool
		why  string
	}{
		"all rested": {
			cs:   []Composite{{Name: "a", LastReconciled: now.Add(-time.Minute)}, {Name: "b", LastReconciled: now.Add(-40 * time.Second)}},
			want: true, why: "2 composites; last status change 40s before",
		},
		"a status changed just now": {
			cs:  []Composite{{Name: "a", LastReconciled: now.Add(-time.Minute)}, {Name: "b", LastReconciled: now.Add(-29 * time.Second)}},
			why: "1 with a status change in the last 30s (b)",
		},
		"a breaker open on a rested engine: polled every 5s": {
			cs:  []Composite{{Name: "a", LastReconciled: now.Add(-time.Hour), BreakerOpen: true}},
			why: "1 with the circuit breaker open (a)",
		},
		"many": {
			cs: []Composite{
				{Name: "d", LastReconciled: now, BreakerOpen: true}, {Name: "c", LastReconciled: now, BreakerOpen: true},
				{Name: "b", LastReconciled: now, BreakerOpen: true}, {Name: "a", LastReconciled: now, BreakerOpen: true},
			},
			why: "4 with the circuit breaker open (a, b, c and 1 more); 4 with a status change in the last 30s (a, b, c and 1 more)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, why := Steady(tc.cs, now, quiet)
			if got != tc.want || why != tc.why {
				t.Errorf("Steady(...) = %v, %q; want %v, %q", got, why, tc.want, tc.why)
			}
		})
	}
}
