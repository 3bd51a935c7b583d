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
		w    *Workload // one StatefulSet each, none terminating, when nil
		want bool
		why  string
	}{
		"all rested": {
			cs:   []Composite{{Name: "a", LastReconciled: now.Add(-time.Minute)}, {Name: "b", LastReconciled: now.Add(-40 * time.Second)}},
			want: true, why: "2 composites; last status change 40s before; 2 engine StatefulSets, none terminating",
		},
		"an old generation still being deleted": {
			cs:  []Composite{{Name: "a", LastReconciled: now.Add(-time.Minute)}, {Name: "b", LastReconciled: now.Add(-40 * time.Second)}},
			w:   &Workload{StatefulSets: 3, Terminating: 2},
			why: "3 engine StatefulSets for 2 engines, 2 StatefulSets and pods terminating",
		},
		"an old generation's last pod still terminating": {
			cs:  []Composite{{Name: "a", LastReconciled: now.Add(-time.Minute)}},
			w:   &Workload{StatefulSets: 1, Terminating: 1},
			why: "1 engine StatefulSets for 1 engines, 1 StatefulSets and pods terminating",
		},
		"an engine without its StatefulSet": {
			cs:  []Composite{{Name: "a", LastReconciled: now.Add(-time.Minute)}, {Name: "b", LastReconciled: now.Add(-time.Minute)}},
			w:   &Workload{StatefulSets: 1},
			why: "1 engine StatefulSets for 2 engines, 0 StatefulSets and pods terminating",
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
			w := Workload{StatefulSets: len(tc.cs)}
			if tc.w != nil {
				w = *tc.w
			}
			got, why := Steady(tc.cs, w, len(tc.cs), now, quiet)
			if got != tc.want || why != tc.why {
				t.Errorf("Steady(...) = %v, %q; want %v, %q", got, why, tc.want, tc.why)
			}
		})
	}
}
