package scrape

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
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

// lengthPrefix is a delimited-protobuf length prefix claiming n bytes,
// followed by tail: the shape of a metrics bomb.
func lengthPrefix(n uint64, tail string) string {
	return string(protowire.AppendVarint(nil, n)) + tail
}

// protoFamily is one family as a delimited-protobuf message.
func protoFamily(t testing.TB, mf *dto.MetricFamily) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := protodelim.MarshalTo(&b, mf); err != nil {
		t.Fatalf("cannot encode test family: %v", err)
	}
	return b.String()
}

// truncatedProto is a valid two-family protobuf body with its last cut
// bytes removed, and the error Parse must give for it.
func truncatedProto(t testing.TB, cut int) (body, wantErr string) {
	t.Helper()
	full := protoBody(t, metricsText("0", "0"))
	size0, n0 := protowire.ConsumeVarint([]byte(full))
	second := n0 + int(size0)
	size1, n1 := protowire.ConsumeVarint([]byte(full[second:]))
	if n0 < 0 || n1 < 0 || second+n1+int(size1) != len(full) {
		t.Fatalf("protoBody is not two delimited messages: %q", full)
	}
	return full[:len(full)-cut], fmt.Sprintf("cannot decode protobuf metrics: message 1 claims %d bytes, but the body ends %d bytes later", size1, int(size1)-cut)
}

func parseCases(t testing.TB) map[string]parseCase {
	truncated, truncatedErr := truncatedProto(t, 3)
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
		"ProtobufPrefixNear2To63": {
			reason:      "A length prefix near 2^63 is refused before anything is allocated; expfmt's decoder panics on it.",
			body:        lengthPrefix(math.MaxInt64, "\x0a\x01a"),
			contentType: protoContentType,
			wantErr:     fmt.Sprintf("cannot decode protobuf metrics: message 0 claims %d bytes, more than the limit of %d bytes", uint64(math.MaxInt64), DefaultMaxBodyBytes),
		},
		"ProtobufPrefixMaxUint64": {
			reason:      "The largest prefix a varint can hold is refused too.",
			body:        lengthPrefix(math.MaxUint64, ""),
			contentType: protoContentType,
			wantErr:     fmt.Sprintf("cannot decode protobuf metrics: message 0 claims %d bytes, more than the limit of %d bytes", uint64(math.MaxUint64), DefaultMaxBodyBytes),
		},
		"ProtobufPrefixOneTiB": {
			reason:      "A 1 TiB prefix would have expfmt allocate 1 TiB; it is refused.",
			body:        lengthPrefix(1<<40, "\x0a\x01a"),
			contentType: protoContentType,
			wantErr:     fmt.Sprintf("cannot decode protobuf metrics: message 0 claims %d bytes, more than the limit of %d bytes", uint64(1<<40), DefaultMaxBodyBytes),
		},
		"ProtobufPrefixJustAboveLimit": {
			reason:      "A prefix one byte above the body limit is refused by the limit.",
			body:        lengthPrefix(uint64(DefaultMaxBodyBytes)+1, "\x0a\x01a"),
			contentType: protoContentType,
			wantErr:     fmt.Sprintf("cannot decode protobuf metrics: message 0 claims %d bytes, more than the limit of %d bytes", DefaultMaxBodyBytes+1, DefaultMaxBodyBytes),
		},
		"ProtobufPrefixAtLimitShortBody": {
			reason:      "A prefix within the limit but beyond the body is refused before its buffer is allocated.",
			body:        lengthPrefix(uint64(DefaultMaxBodyBytes), "\x0a\x01a"),
			contentType: protoContentType,
			wantErr:     fmt.Sprintf("cannot decode protobuf metrics: message 0 claims %d bytes, but the body ends 3 bytes later", DefaultMaxBodyBytes),
		},
		"ProtobufTruncated": {
			reason:      "A valid body cut inside its last message is an error, not a body without that family.",
			body:        truncated,
			contentType: protoContentType,
			wantErr:     truncatedErr,
		},
		"ProtobufZeroLength": {
			reason:      "A zero-length message names no gauge and is skipped, as every other family is.",
			body:        lengthPrefix(0, "") + protoBody(t, metricsText("0", "0")),
			contentType: protoContentType,
		},
		"ProtobufOtherFamilySkipped": {
			reason:      "Another family is not decoded, so its contents, valid or not, do not matter.",
			body:        protoFamily(t, &dto.MetricFamily{Name: proto.String("firebolt_other"), Metric: []*dto.Metric{{Label: []*dto.LabelPair{{Name: proto.String("l"), Value: proto.String("\xff")}}}}}) + protoBody(t, metricsText("4", "0")),
			contentType: protoContentType,
			want:        Queries{Running: 4},
		},
		"ProtobufGaugeMessagesOverBudget": {
			reason:      "The messages naming the gauges are decoded only up to maxGaugeBytes; more is refused, not decoded.",
			body:        protoFamily(t, &dto.MetricFamily{Name: proto.String(RunningQueriesMetric), Metric: make([]*dto.Metric, maxGaugeBytes/2)}) + protoBody(t, metricsText("0", "0")),
			contentType: protoContentType,
			wantErr:     "cannot decode protobuf metrics: the messages naming firebolt_running_queries and firebolt_suspended_queries exceed 65536 bytes",
		},
		"ProtobufUnterminatedVarint": {
			reason:      "A prefix that never ends is garbage.",
			body:        strings.Repeat("\xff", 12),
			contentType: protoContentType,
			wantErr:     "cannot decode protobuf metrics: cannot decode the length of message 0: ",
		},
		"ProtobufGarbage": {
			reason:      "A message that is not a MetricFamily is garbage.",
			body:        lengthPrefix(5, "\xff\xff\xff\xff\xff"),
			contentType: protoContentType,
			wantErr:     "cannot decode protobuf metrics: cannot decode message 0: ",
		},
		"ProtobufInvalidLabelValue": {
			reason: "A gauge's label value that is not UTF-8 is refused, as expfmt refuses it.",
			body: protoFamily(t, &dto.MetricFamily{
				Name:   proto.String(RunningQueriesMetric),
				Type:   dto.MetricType_GAUGE.Enum(),
				Metric: []*dto.Metric{{Label: []*dto.LabelPair{{Name: proto.String("l"), Value: proto.String("\xff")}}, Gauge: &dto.Gauge{Value: proto.Float64(1)}}},
			}) + protoBody(t, metricsText("0", "0")),
			contentType: protoContentType,
			wantErr:     `cannot decode protobuf metrics: invalid message 0: invalid label value "\xff"`,
		},
		"BodyOverLimit": {
			reason:      "A body longer than the limit is refused whole, whatever its format.",
			body:        metricsText("0", "0") + "#" + strings.Repeat("x", int(DefaultMaxBodyBytes)) + "\n",
			contentType: textPlain,
			wantErr:     fmt.Sprintf("metrics body of %d bytes exceeds the limit of %d bytes", len(metricsText("0", "0"))+int(DefaultMaxBodyBytes)+2, DefaultMaxBodyBytes),
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
			reason:      "Something that is not an exposition names neither gauge: missing, so failing.",
			body:        "<html>oops</html>\n",
			contentType: "text/html",
			wantErr:     "metric firebolt_running_queries missing",
		},
		"GarbageAroundTheGauges": {
			reason:      "Lines that name neither gauge are not parsed, as the original read only its two gauges' lines.",
			body:        "<html>oops</html>\n" + metricsText("2", "0") + "{{{\n",
			contentType: textPlain,
			want:        Queries{Running: 2},
		},
		"TextGaugeLinesOverBudget": {
			reason:      "The lines naming the gauges are decoded only up to maxGaugeBytes; more is refused, not decoded.",
			body:        strings.Repeat("firebolt_running_queries{a=\"x\"} 0\n", maxGaugeBytes/16) + metricsText("0", "0"),
			contentType: textPlain,
			wantErr:     "the lines naming firebolt_running_queries and firebolt_suspended_queries exceed 65536 bytes",
		},
		"TextManyOtherSamples": {
			reason:      "Samples of other families cost no decoding, however many.",
			body:        strings.Repeat("other{a=\"x\"} 1\n", maxGaugeBytes) + metricsText("0", "1"),
			contentType: textPlain,
			want:        Queries{Suspended: 1},
		},
		"Truncated": {
			reason:      "A body cut mid-line is an error.",
			body:        metricsText("0", "0") + "firebolt_running_queries{a=\"",
			contentType: textPlain,
			wantErr:     "cannot decode the text lines naming the drain gauges: text format parsing error in line 7: unexpected end of input stream",
		},
		"DuplicateType": {
			reason:      "Contradicting TYPE lines are an error.",
			body:        "# TYPE firebolt_running_queries gauge\nfirebolt_running_queries 0\n# TYPE firebolt_running_queries counter\nfirebolt_suspended_queries 0\n",
			contentType: textPlain,
			wantErr:     "cannot decode the text lines naming the drain gauges: text format parsing error in line 3: second TYPE line for metric name \"firebolt_running_queries\", or TYPE reported after samples",
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
			q, err := Parse([]byte(tc.body), tc.contentType, DefaultMaxBodyBytes)
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
