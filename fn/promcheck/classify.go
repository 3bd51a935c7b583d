package promcheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/crossplane/function-sdk-go/errors"
)

// timeoutError is the cause of a Run's own deadline, told apart from the
// caller's by type.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string { return "timed out after " + e.d.String() }

// ended says why ctx ended, as the end of a sentence whose subject is the
// query or the check: its Cause and a reason such as "timed out after 10s".
func ended(ctx context.Context) (Cause, string) {
	cause := context.Cause(ctx)
	var own *timeoutError
	switch {
	case errors.As(cause, &own):
		return CauseTimeout, own.Error()
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		if errors.Is(cause, context.DeadlineExceeded) {
			return CauseTimeout, "reached the caller's deadline"
		}
		return CauseTimeout, "reached the caller's deadline: " + cause.Error()
	default:
		return CauseCanceled, "was canceled: " + cause.Error()
	}
}

// classify turns the error of a query into a failed Outcome. What can be
// told from the error itself comes first; the end of ctx then explains any
// other error (the transport's words for a cut request vary with where it
// was cut); what the call saw of the response tells the rest apart.
func classify(ctx context.Context, cl *call, err error) Outcome {
	var tooLarge *bodyTooLargeError
	var redirect *redirectError
	var apiErr *v1.Error
	switch {
	case errors.As(err, &tooLarge):
		return failed(CauseBodyTooLarge, "query failed: "+tooLarge.Error())
	case errors.As(err, &redirect):
		return failed(CauseRedirect, "query failed: "+redirect.Error())
	case ctx.Err() != nil:
		cause, reason := ended(ctx)
		return failed(cause, "query "+reason)
	case isTLS(err):
		return failed(CauseTLS, "query failed: "+bare(err))
	case errors.As(err, &apiErr):
		return answered(int(cl.status.Load()), apiErr)
	case cl.status.Load() != 0 && cl.bodyRead.Load():
		// A whole body arrived and client_golang could not decode its data.
		return failed(CauseParse, "query failed: cannot decode the response: "+decodeError(err.Error()))
	default:
		return failed(CauseTransport, "query failed: "+bare(err))
	}
}

// answered classifies an error client_golang made of a response: code is
// the response's status.
//
// client_golang decodes the API's error envelope only for 2xx, 400 and 422;
// for any other status it keeps the body as Detail. Prometheus itself
// answers its errors with 422, 503 (its query timeout) or 500, so Detail
// is decoded here too: an API error is an API error whatever the status,
// and http_status is left to what is not Prometheus speaking (a proxy, an
// authentication layer).
func answered(code int, e *v1.Error) Outcome {
	badResponse := e.Type == v1.ErrBadResponse
	switch {
	case code/100 == 2 && badResponse:
		return failed(CauseParse, "query failed: cannot decode the response: "+decodeError(e.Msg))
	case code/100 == 2 || ((code == http.StatusBadRequest || code == http.StatusUnprocessableEntity) && !badResponse):
		return failed(CauseAPIError, apiMessage(code, string(e.Type), e.Msg))
	}
	var env struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
	}
	if json.Unmarshal([]byte(e.Detail), &env) == nil && env.Status == "error" && env.Error != "" {
		return failed(CauseAPIError, apiMessage(code, env.ErrorType, env.Error))
	}
	msg := "query failed: server answered " + strings.TrimSpace(strconv.Itoa(code)+" "+http.StatusText(code))
	if d := strings.TrimSpace(e.Detail); d != "" {
		msg += ": " + d
	}
	return failed(CauseHTTPStatus, msg)
}

// decodeError keeps what json-iterator, which client_golang decodes with,
// says went wrong and drops where: its excerpts of the body are cut at
// arbitrary bytes, so one could hold part of a credential the scrubbing
// cannot recognise.
func decodeError(msg string) string {
	msg, _, _ = strings.Cut(msg, ", error found in #")
	return strings.ReplaceAll(msg, "unmarshalerDecoder: ", "")
}

func apiMessage(code int, errorType, msg string) string {
	if errorType == "" {
		errorType = "unknown"
	}
	return "query failed: server answered " + strconv.Itoa(code) + ": " + errorType + " error: " + msg
}

// isTLS tells a failed handshake from other transport errors: the fix (a
// CA, insecureSkipVerify, the right scheme) is not the same.
func isTLS(err error) bool {
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var authority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var op *net.OpError
	if errors.As(err, &op) && (op.Op == "remote error" || op.Op == "local error") {
		// crypto/tls reports the alerts it receives and sends this way.
		return true
	}
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &authority) ||
		errors.As(err, &hostname) || errors.As(err, &invalid)
}

// bare drops net/http's `Post "<url>": ` prefix: the URL is the user's own,
// and only makes the message long.
func bare(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
