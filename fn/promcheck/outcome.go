package promcheck

import (
	"strconv"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Outcome is one check's answer, a plain comparable value for the caller's
// pure core.
type Outcome struct {
	// Succeeded is true iff the query returned data.
	Succeeded bool
	// Series is how many series a vector or matrix result held (a matrix's
	// series count only with at least one sample); 0 for a scalar or string
	// result and for a failure.
	Series int
	// Cause says why the query could not be run or read; empty on success
	// and when the query returned no data.
	Cause Cause
	// Message says what the query returned or why it failed, in at most
	// MaxMessageBytes of printable UTF-8 and without any credential value.
	Message string
}

func failed(c Cause, msg string) Outcome { return Outcome{Cause: c, Message: msg} }

// judge decides a check from a query's result. Pure.
//
// A scalar or string result is data: PromQL filters only vectors, so an
// expression of scalars cannot return "nothing" (a comparison of scalars
// needs the bool modifier, which answers 0 or 1, both values). A check
// meant to fail must return a vector. client_golang v1.23 decodes no
// string result, so a string literal as a check fails as CauseParse before
// it gets here.
func judge(v model.Value, warnings v1.Warnings) Outcome {
	var o Outcome
	switch r := v.(type) {
	case model.Vector:
		o.Series = len(r)
	case model.Matrix:
		for _, s := range r {
			if len(s.Values) > 0 || len(s.Histograms) > 0 {
				o.Series++
			}
		}
	case *model.Scalar:
		return withWarnings(Outcome{Succeeded: true, Message: "returned scalar " + r.Value.String()}, warnings)
	case *model.String:
		return withWarnings(Outcome{Succeeded: true, Message: "returned a string"}, warnings)
	default:
		// client_golang decodes only the four result types; anything else
		// is an error before this, so this is a nil result.
		return failed(CauseParse, "query failed: the response holds no result")
	}
	if o.Series == 0 {
		return withWarnings(Outcome{Message: "returned no data"}, warnings)
	}
	o.Succeeded = true
	o.Message = "returned " + strconv.Itoa(o.Series) + " series"
	return withWarnings(o, warnings)
}

// withWarnings appends the first of Prometheus's warnings, which often
// explain an empty result (a metric that is not a counter, a partial answer).
func withWarnings(o Outcome, w v1.Warnings) Outcome {
	switch len(w) {
	case 0:
	case 1:
		o.Message += "; warning: " + w[0]
	default:
		o.Message += "; warning: " + w[0] + " (and " + strconv.Itoa(len(w)-1) + " more)"
	}
	return o
}
