package autostop

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Schedule is a parsed list of always-on windows. The zero Schedule has no
// windows and is never active.
type Schedule struct {
	windows []window
}

// window is one parsed AutoStopWindow, in minutes of the UTC day.
type window struct {
	start, end int
	// days is a bit set over time.Weekday; 0 means every day, as in the
	// original (days is optional).
	days uint8
}

// weekdays maps the schema's day names to time.Weekday.
var weekdays = map[v1alpha1.Weekday]time.Weekday{
	"Sun": time.Sunday, "Mon": time.Monday, "Tue": time.Tuesday, "Wed": time.Wednesday,
	"Thu": time.Thursday, "Fri": time.Friday, "Sat": time.Saturday,
}

// ParseSchedule parses the windows at fld. The schema's pattern and enum
// refuse bad values at admission; this checks again because a composite
// can be created without its claim. It reports the first bad field only, so
// the message stays short however many windows are bad.
func ParseSchedule(fld *field.Path, ws []v1alpha1.AutoStopWindow) (Schedule, error) {
	if len(ws) == 0 {
		return Schedule{}, nil
	}
	out := make([]window, 0, len(ws))
	for i, w := range ws {
		at := fld.Index(i)
		start, ok := parseHHMM(w.Start)
		if !ok {
			return Schedule{}, field.Invalid(at.Child("start"), clip(w.Start), "must be a UTC time of day HH:MM, 00:00 to 23:59")
		}
		end, ok := parseHHMM(w.End)
		if !ok {
			return Schedule{}, field.Invalid(at.Child("end"), clip(w.End), "must be a UTC time of day HH:MM, 00:00 to 23:59")
		}
		var days uint8
		for j, d := range w.Days {
			wd, ok := weekdays[d]
			if !ok {
				return Schedule{}, field.NotSupported(at.Child("days").Index(j), clip(string(d)), []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"})
			}
			days |= 1 << wd
		}
		out = append(out, window{start: start, end: end, days: days})
	}
	return Schedule{windows: out}, nil
}

// Active reports whether now falls in any window. Windows are UTC, so there
// is no daylight-saving shift. A window is [start, end): in at start, out at
// end. start == end is an empty window (never a 24-hour one). end < start
// crosses midnight, and the part after midnight belongs to the day the
// window started on: {22:00, 02:00, [Sun]} covers Sunday 22:00 to Monday
// 02:00, and not Sunday 00:00 to 02:00.
func (s Schedule) Active(now time.Time) bool {
	u := now.UTC()
	minute := u.Hour()*60 + u.Minute()
	today := u.Weekday()
	yesterday := (today + 6) % 7
	for _, w := range s.windows {
		var day time.Weekday
		switch {
		case w.start == w.end:
			continue
		case w.start < w.end && minute >= w.start && minute < w.end:
			day = today
		case w.start > w.end && minute >= w.start:
			day = today
		case w.start > w.end && minute < w.end:
			day = yesterday
		default:
			continue
		}
		if w.days == 0 || w.days&(1<<day) != 0 {
			return true
		}
	}
	return false
}

// parseHHMM parses exactly the schema's pattern ^([01]\d|2[0-3]):[0-5]\d$
// into minutes of the day.
func parseHHMM(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, false
	}
	return h*60 + m, true
}
