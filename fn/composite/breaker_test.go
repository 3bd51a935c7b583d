package composite

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLastReconciled: the one rule both the engine and the class stamp
// status.lastReconciled by.
func TestLastReconciled(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	stamped := metav1.NewTime(now.Truncate(time.Second))
	ago := func(d time.Duration) *metav1.Time { t := metav1.NewTime(stamped.Add(-d)); return &t }
	cases := map[string]struct {
		last          *metav1.Time
		changed, open bool
		openedAgo     time.Duration // 0: the open time is unknown
		want          *metav1.Time
	}{
		"NeverStamped":          {want: &stamped},
		"StatusChanged":         {last: ago(time.Second), changed: true, want: &stamped},
		"AtRest":                {last: ago(time.Hour), want: ago(time.Hour)},
		"BreakerOpenFresh":      {last: ago(time.Second), open: true, want: ago(time.Second)},
		"BreakerOpenJustUnder":  {last: ago(BreakerReprobe - time.Second), open: true, want: ago(BreakerReprobe - time.Second)},
		"BreakerOpenForReprobe": {last: ago(BreakerReprobe), open: true, want: &stamped},
		"BreakerOpenLongAtRest": {last: ago(time.Hour), open: true, want: &stamped},
		"BreakerOpenAndChanged": {last: ago(time.Second), changed: true, open: true, want: &stamped},
		// Seen at N = 25: the status last changed a second before the
		// breaker opened; a reprobe 5m after that change came a second too
		// early to close it.
		"OpenDurationPassed":     {last: ago(BreakerReprobe - 2*time.Second), open: true, openedAgo: BreakerReprobe + time.Second, want: &stamped},
		"OpenDurationNotPassed":  {last: ago(BreakerReprobe - 2*time.Second), open: true, openedAgo: BreakerReprobe, want: ago(BreakerReprobe - 2*time.Second)},
		"ReprobedAfterOpenEnded": {last: ago(time.Second), open: true, openedAgo: BreakerReprobe + 10*time.Second, want: ago(time.Second)},
		"OpenedInTheFuture":      {last: ago(time.Minute), open: true, openedAgo: -time.Hour, want: ago(time.Minute)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := Breaker{Open: tc.open}
			if tc.openedAgo != 0 {
				b.OpenedAt = stamped.Add(-tc.openedAgo)
			}
			got := LastReconciled(tc.last, tc.changed, b, now)
			if got == nil || !got.Equal(tc.want) {
				t.Errorf("LastReconciled(%v, changed %t, breaker open %t, %s) = %v, want %v", tc.last, tc.changed, tc.open, now, got, tc.want)
			}
		})
	}
}

// TestBreakerOf: the breaker's state and open time come from Crossplane's
// Responsive condition, an untrusted part of the composite's status.
func TestBreakerOf(t *testing.T) {
	xr := func(conditions ...any) map[string]any {
		return map[string]any{"status": map[string]any{"conditions": conditions}}
	}
	cond := func(status, at any) map[string]any {
		return map[string]any{"type": "Responsive", "status": status, "reason": "WatchCircuitOpen", "lastTransitionTime": at}
	}
	opened := time.Date(2026, 11, 24, 17, 45, 20, 0, time.UTC)
	cases := map[string]struct {
		xr   map[string]any
		want Breaker
	}{
		"NoConditions":    {xr: map[string]any{}, want: Breaker{}},
		"Closed":          {xr: xr(cond("True", "2026-11-24T17:45:20Z")), want: Breaker{}},
		"Open":            {xr: xr(map[string]any{"type": "Synced", "status": "True"}, cond("False", "2026-11-24T17:45:20Z")), want: Breaker{Open: true, OpenedAt: opened}},
		"OpenTimeGarbage": {xr: xr(cond("False", "yesterday")), want: Breaker{Open: true}},
		"OpenTimeNumber":  {xr: xr(cond("False", int64(12))), want: Breaker{Open: true}},
		"NotAnObject":     {xr: xr("Responsive", cond("False", "2026-11-24T17:45:20Z")), want: Breaker{Open: true, OpenedAt: opened}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := BreakerOf(tc.xr); !got.OpenedAt.Equal(tc.want.OpenedAt) || got.Open != tc.want.Open {
				t.Errorf("BreakerOf(...) = %+v, want %+v", got, tc.want)
			}
		})
	}
}
