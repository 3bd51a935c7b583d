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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := LastReconciled(tc.last, tc.changed, tc.open, now)
			if got == nil || !got.Equal(tc.want) {
				t.Errorf("LastReconciled(%v, changed %t, breaker open %t, %s) = %v, want %v", tc.last, tc.changed, tc.open, now, got, tc.want)
			}
		})
	}
}
