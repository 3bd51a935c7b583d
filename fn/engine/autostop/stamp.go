package autostop

import (
	"fmt"
	"time"
)

// WakeAnnotation is the annotation the gateway's wake agent stamps on a
// FireboltEngine claim, with the RFC 3339 time of the demand (seed 003).
const WakeAnnotation = "firebolt.io/wake-requested"

// stampState is what a wake stamp says at a given time.
type stampState int

const (
	stampAbsent stampState = iota
	stampFresh
	stampStale
	stampMalformed
	stampFuture
)

// stamp is a read wake stamp: its state, and for an ignored stamp the
// message that says why.
type stamp struct {
	state   stampState
	message string
}

// readStamp reads the wake annotation's value at now. A stamp is fresh
// while now - stamp < WakeTTL. A stamp more than WakeTTL in the future is
// ignored too: a clock skew between the gateway and the function is
// tolerated, but a mistyped year would otherwise hold the engine awake
// until then.
func readStamp(value string, now time.Time) stamp {
	if value == "" {
		return stamp{state: stampAbsent}
	}
	// No RFC 3339 time is longer than maxQuoted; a longer value is not
	// parsed at all.
	at, err := time.Parse(time.RFC3339, value)
	if len(value) > maxQuoted || err != nil {
		return stamp{state: stampMalformed, message: fmt.Sprintf("ignored the wake stamp %s=%q: not an RFC 3339 time", WakeAnnotation, clip(value))}
	}
	age := now.Sub(at)
	switch {
	case age >= WakeTTL:
		return stamp{state: stampStale, message: fmt.Sprintf("ignored the wake stamp %s=%q: older than %s", WakeAnnotation, clip(value), WakeTTL)}
	case age <= -WakeTTL:
		return stamp{state: stampFuture, message: fmt.Sprintf("ignored the wake stamp %s=%q: more than %s in the future", WakeAnnotation, clip(value), WakeTTL)}
	}
	return stamp{state: stampFresh, message: fmt.Sprintf("wake requested at %s", at.UTC().Format(time.RFC3339))}
}
