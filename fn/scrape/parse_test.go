package scrape

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
)

var protoContentType = string(expfmt.NewFormat(expfmt.TypeProtoDelim))

// parseCase is shared with the fuzz target's seed corpus.
type parseCase struct {
	reason      string
	body        string
	contentType string
	want        Queries
	wantErr     string
}

func parseCases(t testing.TB) map[string]parseCase {
	return map[string]parseCase{
		"Drained": {
			reason:      "Both gauges at zero parse as zero.",
			body:        metricsText("0", "0"),
			contentType: textPlain,
		},
		"Busy": {
			reason:      "Values are read as they are.",
			body:        metricsText("2", "1"),
			contentType: textPlain,
			want:        Queries{Running: 2, Suspended: 1},
		},
		"Fractional": {
			reason:      "A fractional value is kept, not truncated to zero as the original did, so it never reads as drained.",
			body:        metricsText("0.5", "0"),
			contentType: textPlain,
			want:        Queries{Running: 0.5},
		},
		"UntypedWithTimestamps": {
			reason:      "Families without a TYPE line are untyped and count; trailing timestamps are ignored.",
			body:        "firebolt_running_queries 3 1700000000000\nfirebolt_suspended_queries 4 1700000000000\n",
			contentType: textPlain,
			want:        Queries{Running: 3, Suspended: 4},
		},
		"LabelledSamplesSummed": {
			reason:      "Every sample of a family counts, labelled or not.",
			body:        "# TYPE firebolt_running_queries gauge\nfirebolt_running_queries{pool=\"a\"} 1\nfirebolt_running_queries{pool=\"b\"} 2\nfirebolt_running_queries 4\n# TYPE firebolt_suspended_queries gauge\nfirebolt_suspended_queries{pool=\"a\"} 5\n",
			contentType: textPlain,
			want:        Queries{Running: 7, Suspended: 5},
		},
		"OtherFamilies": {
			reason:      "Other families, of any type, are ignored.",
			body:        realisticBody(),
			contentType: textPlain,
		},
		"NoContentType": {
			reason: "A body without a Content-Type is read as text.",
			body:   metricsText("1", "0"),
			want:   Queries{Running: 1},
		},
		"OpenMetrics": {
			reason:      "An OpenMetrics body falls back to the text parser, which reads it.",
			body:        metricsText("0", "3") + "# EOF\n",
			contentType: "application/openmetrics-text; version=1.0.0; charset=utf-8",
			want:        Queries{Suspended: 3},
		},
		"QuotedUTF8Name": {
			reason:      "A family with a quoted UTF-8 name elsewhere in the body does not spoil the parse.",
			body:        "{\"engine.cache.hits\"} 12\n" + metricsText("0", "0"),
			contentType: textPlain,
		},
		"Protobuf": {
			reason:      "A delimited-protobuf Content-Type is honoured.",
			body:        protoBody(t, metricsText("6", "0")),
			contentType: protoContentType,
			want:        Queries{Running: 6},
		},
		"ProtobufBodyLabelledText": {
			reason:      "A text body labelled protobuf is decoded as protobuf and fails rather than being guessed at.",
			body:        metricsText("0", "0"),
			contentType: protoContentType,
			wantErr:     "cannot decode protobuf metrics: ",
		},
		"RunningMissing": {
			reason:      "A body without the running gauge is an error, not drained.",
			body:        "# TYPE firebolt_suspended_queries gauge\nfirebolt_suspended_queries 0\n",
			contentType: textPlain,
			wantErr:     "metric firebolt_running_queries missing",
		},
		"SuspendedMissing": {
			reason:      "A body without the suspended gauge is an error, not drained.",
			body:        "firebolt_running_queries 0\n",
			contentType: textPlain,
			wantErr:     "metric firebolt_suspended_queries missing",
		},
		"TypeWithoutSamples": {
			reason:      "HELP and TYPE lines alone are not a value.",
			body:        "# TYPE firebolt_running_queries gauge\n# TYPE firebolt_suspended_queries gauge\nfirebolt_suspended_queries 0\n",
			contentType: textPlain,
			wantErr:     "metric firebolt_running_queries missing",
		},
		"Empty": {
			reason:      "An empty body has neither gauge.",
			contentType: textPlain,
			wantErr:     "metric firebolt_running_queries missing",
		},
		"Counter": {
			reason:      "A gauge declared as a counter is not the signal we know.",
			body:        "# TYPE firebolt_running_queries counter\nfirebolt_running_queries 0\nfirebolt_suspended_queries 0\n",
			contentType: textPlain,
			wantErr:     "metric firebolt_running_queries has type COUNTER, want gauge or untyped",
		},
		"Negative": {
			reason:      "A negative sample could cancel a busy one; it is rejected.",
			body:        "firebolt_running_queries{a=\"x\"} -1\nfirebolt_running_queries{a=\"y\"} 1\nfirebolt_suspended_queries 0\n",
			contentType: textPlain,
			wantErr:     "metric firebolt_running_queries has invalid value -1, want a finite number >= 0",
		},
		"NaN": {
			reason:      "NaN is neither busy nor drained.",
			body:        metricsText("0", "NaN"),
			contentType: textPlain,
			wantErr:     "metric firebolt_suspended_queries has invalid value NaN, want a finite number >= 0",
		},
		"Inf": {
			reason:      "+Inf is rejected.",
			body:        metricsText("+Inf", "0"),
			contentType: textPlain,
			wantErr:     "metric firebolt_running_queries has invalid value +Inf, want a finite number >= 0",
		},
		"Overflow": {
			reason:      "Finite samples whose sum overflows are rejected.",
			body:        "firebolt_running_queries{a=\"x\"} 1e308\nfirebolt_running_queries{a=\"y\"} 1e308\nfirebolt_suspended_queries 0\n",
			contentType: textPlain,
			wantErr:     "metric firebolt_running_queries overflows: its samples sum to +Inf",
		},
		"Garbage": {
			reason:      "Something that is not an exposition is an error.",
			body:        "<html>oops</html>\n",
			contentType: "text/html",
			wantErr:     "cannot decode text metrics: text format parsing error in line 1: invalid metric name",
		},
		"Truncated": {
			reason:      "A body cut mid-line is an error.",
			body:        metricsText("0", "0") + "firebolt_running_queries{a=\"",
			contentType: textPlain,
			wantErr:     "cannot decode text metrics: text format parsing error in line 7: unexpected end of input stream",
		},
		"DuplicateType": {
			reason:      "Contradicting TYPE lines are an error.",
			body:        "# TYPE firebolt_running_queries gauge\nfirebolt_running_queries 0\n# TYPE firebolt_running_queries counter\nfirebolt_suspended_queries 0\n",
			contentType: textPlain,
			wantErr:     "cannot decode text metrics: text format parsing error in line 3: second TYPE line for metric name \"firebolt_running_queries\", or TYPE reported after samples",
		},
	}
}

func TestParse(t *testing.T) {
	type want struct {
		q Queries
		// err is the error's text, or its prefix when it ends in ": ":
		// the protobuf module deliberately varies its error texts.
		err string
	}
	for name, tc := range parseCases(t) {
		t.Run(name, func(t *testing.T) {
			q, err := Parse([]byte(tc.body), tc.contentType)
			got := want{q: q}
			if err != nil {
				got.err = err.Error()
				if strings.HasSuffix(tc.wantErr, ": ") && strings.HasPrefix(got.err, tc.wantErr) {
					got.err = tc.wantErr
				}
			}
			if diff := cmp.Diff(want{q: tc.want, err: tc.wantErr}, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nParse(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
