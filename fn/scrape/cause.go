package scrape

import "github.com/crossplane/function-sdk-go/errors"

// Cause says, from a small fixed set, why a drain check or one pod's scrape
// failed. It exists for the function's metrics: the error text names pods and
// quotes what they sent, so it can never be a label, while a Cause can.
type Cause string

// Causes. The set is closed: CauseOf never returns anything else.
const (
	// CauseConfig: the check could not start (no Kubernetes client, an
	// unknown scrape mode, an empty selector).
	CauseConfig Cause = "config"
	// CauseList: listing the generation's pods failed.
	CauseList Cause = "list"
	// CauseNoSlot: the pod waited for one of the process-wide scrape slots
	// until the check ran out of time.
	CauseNoSlot Cause = "no_slot"
	// CauseTimeout: the per-pod or overall timeout cut the scrape short.
	CauseTimeout Cause = "timeout"
	// CauseTransport: the request could not be built, sent or read.
	CauseTransport Cause = "transport"
	// CauseHTTPStatus: the pod (or the API server's proxy) answered with a
	// status other than 200.
	CauseHTTPStatus Cause = "http_status"
	// CauseBodyTooLarge: the body exceeded the scrape's byte limit.
	CauseBodyTooLarge Cause = "body_too_large"
	// CauseParse: the body could not be parsed, or lacked a valid drain gauge.
	CauseParse Cause = "parse"
	// CausePanic: scraping the pod panicked and was recovered.
	CausePanic Cause = "panic"
)

// Causes lists every Cause, so a metric can be initialised for each.
var Causes = []Cause{CauseConfig, CauseList, CauseNoSlot, CauseTimeout, CauseTransport,
	CauseHTTPStatus, CauseBodyTooLarge, CauseParse, CausePanic}

// causeError tags err with a Cause without changing its text.
type causeError struct {
	cause Cause
	err   error
}

func (e *causeError) Error() string { return e.err.Error() }
func (e *causeError) Unwrap() error { return e.err }

// withCause tags err with c unless it already carries a Cause: the tag
// nearest to where the error arose is the most precise one.
func withCause(c Cause, err error) error {
	if err == nil {
		return nil
	}
	var ce *causeError
	if errors.As(err, &ce) {
		return err
	}
	return &causeError{cause: c, err: err}
}

// CauseOf returns the Cause err was tagged with by this package; an error
// this package did not tag (never expected) reads as CauseTransport, the
// broadest cause, so the set stays closed.
func CauseOf(err error) Cause {
	var ce *causeError
	if errors.As(err, &ce) {
		return ce.cause
	}
	return CauseTransport
}
