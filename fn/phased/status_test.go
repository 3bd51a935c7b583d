package phased

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

func TestDecodeEncode(t *testing.T) {
	cases := map[string]struct {
		reason string
		api    *v1alpha1.PhasedRolloutStatus
		want   Status
	}{
		"Nil": {
			reason: "No status is the zero Status, which encodes to none.",
		},
		"Rolling": {
			reason: "Every field read, times parsed to whole seconds in UTC.",
			api: rollingR2(rps{
				Status: promError, Partition: 2, AnalysisStartTime: ts(-300), LastCheckTime: ts(-30),
				ConsecutiveFailedChecks: 2, TotalFailedChecks: 5, LastCheckMessage: "connection refused",
			}),
			want: Status{Phase: rolling, UpdateRevision: r2, RolloutStartTime: now.Add(-time.Hour), RollingPod: &RollingPod{
				Status: promError, Partition: 2, AnalysisStartTime: now.Add(-5 * time.Minute), LastCheckTime: now.Add(-30 * time.Second),
				ConsecutiveFailedChecks: 2, TotalFailedChecks: 5, LastCheckMessage: "connection refused",
			}},
		},
		"Updated": {
			reason: "No step.",
			api:    updatedR1,
			want:   Status{Phase: updated, UpdateRevision: r1, RolloutStartTime: now.Add(-25 * time.Hour), RolloutEndTime: now.Add(-24 * time.Hour)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, notes := Decode(tc.api, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDecode(...): -want, +got:\n%s", tc.reason, diff)
			}
			if len(notes) > 0 {
				t.Errorf("Decode(...) repaired a valid status: %q", notes)
			}
			if diff := cmp.Diff(tc.api, got.Encode()); diff != "" {
				t.Errorf("%s\nEncode(Decode(...)): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDecodeOffsetTime(t *testing.T) {
	got, _ := Decode(&v1alpha1.PhasedRolloutStatus{RolloutStartTime: "2026-11-24T13:30:00+02:00"}, now)
	if want := "2026-11-24T11:30:00Z"; stamp(got.RolloutStartTime) != want {
		t.Errorf("Decode(...).RolloutStartTime = %s, want %s", stamp(got.RolloutStartTime), want)
	}
}

func TestClip(t *testing.T) {
	cases := map[string]string{
		"Short":       "connection refused",
		"Long":        strings.Repeat("x", 1000),
		"LongRunes":   strings.Repeat("é", 300),
		"InvalidUTF8": "bad \xff byte",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got := clip(in)
			if len(got) > maxMessage || !utf8.ValidString(got) {
				t.Errorf("clip(...) = %q: %d bytes, valid UTF-8 %t", got, len(got), utf8.ValidString(got))
			}
			if again := clip(got); again != got {
				t.Errorf("clip(clip(...)) = %q, want %q", again, got)
			}
		})
	}
}
