package autostop

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// at parses an RFC 3339 time; the tests' dates are in November 2026, when
// the 22nd is a Sunday and the 23rd a Monday.
func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return v
}

func win(start, end string, days ...v1alpha1.Weekday) v1alpha1.AutoStopWindow {
	return v1alpha1.AutoStopWindow{Start: start, End: end, Days: days}
}

func TestScheduleActive(t *testing.T) {
	type probe struct {
		now  string
		want bool
	}
	cases := map[string]struct {
		reason  string
		windows []v1alpha1.AutoStopWindow
		probes  []probe
	}{
		"NoWindows": {
			reason: "No schedule is never active.",
			probes: []probe{{"2026-11-23T12:00:00Z", false}},
		},
		"StartInclusiveEndExclusive": {
			reason:  "A window is [start, end): in at start, out at end, to the second.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "17:00")},
			probes: []probe{
				{"2026-11-23T08:59:59Z", false},
				{"2026-11-23T09:00:00Z", true},
				{"2026-11-23T16:59:59Z", true},
				{"2026-11-23T17:00:00Z", false},
			},
		},
		"StartEqualsEndIsEmpty": {
			reason:  "start == end is an empty window, never a 24-hour one.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "09:00")},
			probes: []probe{
				{"2026-11-23T08:59:59Z", false},
				{"2026-11-23T09:00:00Z", false},
				{"2026-11-23T09:00:59Z", false},
				{"2026-11-23T21:00:00Z", false},
			},
		},
		"MidnightStartEqualsEndIsEmpty": {
			reason:  "00:00-00:00 is empty too.",
			windows: []v1alpha1.AutoStopWindow{win("00:00", "00:00")},
			probes:  []probe{{"2026-11-23T00:00:00Z", false}, {"2026-11-23T12:00:00Z", false}},
		},
		"WholeDayButTheLastMinute": {
			reason:  "00:00-23:59 ends at 23:59: the last minute is out.",
			windows: []v1alpha1.AutoStopWindow{win("00:00", "23:59")},
			probes: []probe{
				{"2026-11-23T00:00:00Z", true},
				{"2026-11-23T23:58:59Z", true},
				{"2026-11-23T23:59:00Z", false},
			},
		},
		"EveryDayWhenDaysEmpty": {
			reason:  "No days means every day.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "10:00")},
			probes: []probe{
				{"2026-11-22T09:30:00Z", true}, // Sunday
				{"2026-11-23T09:30:00Z", true}, // Monday
				{"2026-11-28T09:30:00Z", true}, // Saturday
			},
		},
		"OnlyTheListedDays": {
			reason:  "A window with days applies on those days only.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "10:00", "Mon", "Wed")},
			probes: []probe{
				{"2026-11-22T09:30:00Z", false}, // Sunday
				{"2026-11-23T09:30:00Z", true},  // Monday
				{"2026-11-24T09:30:00Z", false}, // Tuesday
				{"2026-11-25T09:30:00Z", true},  // Wednesday
			},
		},
		"CrossesMidnightBelongsToStartDay": {
			reason:  "22:00-02:00 on Monday covers Monday 22:00 to Tuesday 02:00, not Monday 00:00-02:00.",
			windows: []v1alpha1.AutoStopWindow{win("22:00", "02:00", "Mon")},
			probes: []probe{
				{"2026-11-23T01:00:00Z", false}, // Monday morning: Sunday's window
				{"2026-11-23T21:59:59Z", false},
				{"2026-11-23T22:00:00Z", true},
				{"2026-11-23T23:59:59Z", true},
				{"2026-11-24T00:00:00Z", true}, // Tuesday, Monday's window
				{"2026-11-24T01:59:59Z", true},
				{"2026-11-24T02:00:00Z", false},
				{"2026-11-24T22:00:00Z", false}, // Tuesday evening: not listed
			},
		},
		"CrossesMidnightSundayToMonday": {
			reason:  "The week wraps: Sunday's window runs into Monday.",
			windows: []v1alpha1.AutoStopWindow{win("23:00", "01:00", "Sun")},
			probes: []probe{
				{"2026-11-22T00:30:00Z", false}, // Sunday morning: Saturday's window
				{"2026-11-22T23:00:00Z", true},
				{"2026-11-23T00:30:00Z", true}, // Monday morning: Sunday's window
				{"2026-11-23T01:00:00Z", false},
			},
		},
		"CrossesMidnightSaturdayToSunday": {
			reason:  "Saturday's window runs into Sunday, the other end of time.Weekday.",
			windows: []v1alpha1.AutoStopWindow{win("23:00", "01:00", "Sat")},
			probes: []probe{
				{"2026-11-22T00:30:00Z", true}, // Sunday morning
				{"2026-11-23T00:30:00Z", false},
			},
		},
		"CrossesMidnightToMidnight": {
			reason:  "22:00-00:00 ends exactly at midnight: nothing of the next day.",
			windows: []v1alpha1.AutoStopWindow{win("22:00", "00:00", "Sun")},
			probes: []probe{
				{"2026-11-22T23:59:59Z", true},
				{"2026-11-23T00:00:00Z", false},
			},
		},
		"AnyWindow": {
			reason:  "Windows are or-ed.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "09:00"), win("06:00", "07:00", "Tue"), win("12:00", "13:00")},
			probes: []probe{
				{"2026-11-23T06:30:00Z", false},
				{"2026-11-24T06:30:00Z", true},
				{"2026-11-23T12:30:00Z", true},
			},
		},
		"UTCWhateverTheZoneOfNow": {
			reason:  "Windows are UTC: a time in another zone is the same instant.",
			windows: []v1alpha1.AutoStopWindow{win("22:00", "23:00", "Sun")},
			probes: []probe{
				{"2026-11-23T00:30:00+02:00", true},  // Sunday 22:30 UTC, Monday locally
				{"2026-11-22T22:30:00+02:00", false}, // Sunday 20:30 UTC
			},
		},
		"NoDaylightSaving": {
			reason:  "UTC has no daylight-saving shift: the window holds across Europe's change on 2026-03-29.",
			windows: []v1alpha1.AutoStopWindow{win("01:00", "02:00")},
			probes: []probe{
				{"2026-03-28T01:30:00Z", true},
				{"2026-03-29T01:30:00Z", true},
				{"2026-03-29T02:00:00Z", false},
				{"2026-03-30T01:30:00Z", true},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := ParseSchedule(field.NewPath("spec", "autoStop", "schedule"), tc.windows)
			if err != nil {
				t.Fatalf("%s\nParseSchedule(...): %v", tc.reason, err)
			}
			for _, p := range tc.probes {
				if got := s.Active(at(t, p.now)); got != p.want {
					t.Errorf("%s\nActive(%s) = %v, want %v", tc.reason, p.now, got, p.want)
				}
			}
		})
	}
}

func TestParseSchedule(t *testing.T) {
	cases := map[string]struct {
		reason  string
		windows []v1alpha1.AutoStopWindow
		err     string
	}{
		"Valid": {
			reason:  "The schema's extremes parse.",
			windows: []v1alpha1.AutoStopWindow{win("00:00", "23:59", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")},
		},
		"HourOutOfRange": {
			reason:  "24:00 is not a time of day; the message names the window's index and field.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "10:00"), win("24:00", "10:00")},
			err:     `spec.autoStop.schedule[1].start: Invalid value: "24:00": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
		"MinuteOutOfRange": {
			reason:  "Minutes run to 59.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "09:60")},
			err:     `spec.autoStop.schedule[0].end: Invalid value: "09:60": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
		"OneDigitHour": {
			reason:  "The pattern wants two digits.",
			windows: []v1alpha1.AutoStopWindow{win("9:00", "10:00")},
			err:     `spec.autoStop.schedule[0].start: Invalid value: "9:00": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
		"NotDigits": {
			reason:  "Letters are not a time.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "1a:00")},
			err:     `spec.autoStop.schedule[0].end: Invalid value: "1a:00": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
		"WrongSeparator": {
			reason:  "HH.MM is not HH:MM.",
			windows: []v1alpha1.AutoStopWindow{win("09.00", "10:00")},
			err:     `spec.autoStop.schedule[0].start: Invalid value: "09.00": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
		"Empty": {
			reason:  "A window needs both ends.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "")},
			err:     `spec.autoStop.schedule[0].end: Invalid value: "": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
		"UnknownDay": {
			reason:  "Days are the schema's three-letter names.",
			windows: []v1alpha1.AutoStopWindow{win("09:00", "10:00", "Mon", "Tuesday")},
			err:     `spec.autoStop.schedule[0].days[1]: Unsupported value: "Tuesday": supported values: "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"`,
		},
		"HostileValueClipped": {
			reason:  "A huge value is not repeated whole in the message.",
			windows: []v1alpha1.AutoStopWindow{win("0123456789012345678901234567890123456789012345678901234567890123456789", "10:00")},
			err:     `spec.autoStop.schedule[0].start: Invalid value: "0123456789012345678901234567890123456789012345678901234567890123…": must be a UTC time of day HH:MM, 00:00 to 23:59`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseSchedule(field.NewPath("spec", "autoStop", "schedule"), tc.windows)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.err {
				t.Errorf("%s\nParseSchedule(...) error:\n got: %s\nwant: %s", tc.reason, got, tc.err)
			}
		})
	}
}
