package scrape

import (
	"bytes"
	"math"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/crossplane/function-sdk-go/errors"
)

// Queries are one pod's drain gauges, each summed over all its samples.
type Queries struct {
	Running   float64
	Suspended float64
}

// Parse extracts the drain gauges from a metrics body served with the given
// Content-Type. It is pure: no I/O beyond the bytes it is handed. maxBytes is
// the scrape's body limit: a longer body is refused, no length prefix may
// claim more, and only what names a drain gauge, at most maxGaugeBytes of
// it, is decoded, so the memory a body costs is bounded before it is spent.
//
// Unlike the original, which matched only unlabelled sample lines, every
// sample of a family counts, so an engine that adds labels still reports its
// queries instead of looking "missing". A family must be a gauge or untyped,
// and every sample a finite, non-negative number: a negative sample could
// otherwise cancel a positive one and fake a drained pod.
func Parse(body []byte, contentType string, maxBytes int64) (Queries, error) {
	if int64(len(body)) > maxBytes {
		return Queries{}, withCause(CauseBodyTooLarge, errors.Errorf("metrics body of %d bytes exceeds the limit of %d bytes", len(body), maxBytes))
	}
	fams, err := decode(body, contentType, maxBytes)
	if err != nil {
		return Queries{}, err
	}
	running, err := sum(fams, RunningQueriesMetric)
	if err != nil {
		return Queries{}, err
	}
	suspended, err := sum(fams, SuspendedQueriesMetric)
	if err != nil {
		return Queries{}, err
	}
	return Queries{Running: running, Suspended: suspended}, nil
}

// maxGaugeBytes bounds the part of a body that names the two drain gauges,
// the only part decoded into objects. Decoding costs far more memory than
// the bytes decoded (tens of times for many small samples), so the body
// limit alone would let one pod make the function hold gigabytes; an
// engine's two gauges take a few hundred bytes.
const maxGaugeBytes = 64 << 10

// gaugeNames are what a line or message must contain to be decoded.
var gaugeNames = [][]byte{[]byte(RunningQueriesMetric), []byte(SuspendedQueriesMetric)}

// decode honours the response's Content-Type: delimited protobuf when the
// server says so, the text format otherwise (expfmt's own fallback, which
// also reads OpenMetrics). Only what names a drain gauge is decoded, as the
// original only read the lines of its two gauges.
func decode(body []byte, contentType string, maxBytes int64) ([]*dto.MetricFamily, error) {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	if expfmt.ResponseFormat(h).FormatType() == expfmt.TypeProtoDelim {
		fams, err := decodeProtoDelim(body, maxBytes)
		if err != nil {
			return nil, errors.Wrap(err, "cannot decode protobuf metrics")
		}
		return fams, nil
	}
	return decodeText(body)
}

// decodeText parses the lines that name a drain gauge. A sample line
// always names its metric, and text-format escapes never spell a name's
// letters differently, so no line that could count is left out. Names are
// validated as UTF-8 rather than the legacy charset, explicitly, because
// prometheus/common no longer has a usable default.
func decodeText(body []byte) ([]*dto.MetricFamily, error) {
	var gauges []byte
	for rest := body; len(rest) > 0; {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		rest = after
		if !namesGauge(line) {
			continue
		}
		if len(gauges)+len(line)+1 > maxGaugeBytes {
			return nil, errors.Errorf("the lines naming %s and %s exceed %d bytes", RunningQueriesMetric, SuspendedQueriesMetric, maxGaugeBytes)
		}
		gauges = append(gauges, line...)
		if found {
			gauges = append(gauges, '\n')
		}
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := p.TextToMetricFamilies(bytes.NewReader(gauges))
	if err != nil {
		// Line numbers count the lines naming the gauges only.
		return nil, errors.Wrap(err, "cannot decode the text lines naming the drain gauges")
	}
	fams := make([]*dto.MetricFamily, 0, len(byName))
	for _, mf := range byName {
		fams = append(fams, mf)
	}
	return fams, nil
}

func namesGauge(b []byte) bool {
	for _, n := range gaugeNames {
		if bytes.Contains(b, n) {
			return true
		}
	}
	return false
}

// decodeProtoDelim reads varint-length-delimited MetricFamily messages.
// expfmt's own decoder trusts the length prefix (MaxSize -1) and allocates
// whatever it says before reading: a prefix near 2^63 panics, one of a TiB
// exhausts memory, for every tenant of the process. Here the framing is
// read off the body already in memory: a prefix may claim no more than the
// body limit and no more than the bytes left, and a message is only
// looked at in place until its name says it is a drain gauge. Only those
// messages are decoded, and their names checked as expfmt checks them.
func decodeProtoDelim(body []byte, maxBytes int64) ([]*dto.MetricFamily, error) {
	var fams []*dto.MetricFamily
	decoded := 0
	for i, rest := 0, body; len(rest) > 0; i++ {
		size, n := protowire.ConsumeVarint(rest)
		if n < 0 {
			return nil, errors.Wrapf(protowire.ParseError(n), "cannot decode the length of message %d", i)
		}
		rest = rest[n:]
		switch {
		case size > uint64(maxBytes): //nolint:gosec // Parse refuses every body when maxBytes is negative, so it is not.
			return nil, errors.Errorf("message %d claims %d bytes, more than the limit of %d bytes", i, size, maxBytes)
		case size > uint64(len(rest)):
			return nil, errors.Errorf("message %d claims %d bytes, but the body ends %d bytes later", i, size, len(rest))
		}
		msg := rest[:size]
		rest = rest[size:]
		name, err := familyName(msg)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot decode message %d", i)
		}
		if !namesGauge(name) {
			continue
		}
		if decoded += len(msg); decoded > maxGaugeBytes {
			return nil, errors.Errorf("the messages naming %s and %s exceed %d bytes", RunningQueriesMetric, SuspendedQueriesMetric, maxGaugeBytes)
		}
		mf := &dto.MetricFamily{}
		if err := proto.Unmarshal(msg, mf); err != nil {
			return nil, errors.Wrapf(err, "cannot decode message %d", i)
		}
		if err := validNames(mf); err != nil {
			return nil, errors.Wrapf(err, "invalid message %d", i)
		}
		fams = append(fams, mf)
	}
	return fams, nil
}

// familyName returns a MetricFamily message's name (field 1; the last one
// wins, as in any proto decoder) without decoding the rest, which it only
// checks is well-formed.
func familyName(msg []byte) ([]byte, error) {
	var name []byte
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		msg = msg[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(msg)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			name, msg = v, msg[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		msg = msg[n:]
	}
	return name, nil
}

func validNames(mf *dto.MetricFamily) error {
	if !model.UTF8Validation.IsValidMetricName(mf.GetName()) {
		return errors.Errorf("invalid metric name %q", mf.GetName())
	}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if !model.UTF8Validation.IsValidLabelName(l.GetName()) {
				return errors.Errorf("invalid label name %q", l.GetName())
			}
			if !model.LabelValue(l.GetValue()).IsValid() {
				return errors.Errorf("invalid label value %q", l.GetValue())
			}
		}
	}
	return nil
}

// sum adds every sample of the named family. Protobuf may carry a family in
// several messages, so all of them count.
func sum(fams []*dto.MetricFamily, name string) (float64, error) {
	found := false
	total := 0.0
	for _, mf := range fams {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			v, err := sampleValue(name, mf.GetType(), m)
			if err != nil {
				return 0, err
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return 0, errors.Errorf("metric %s has invalid value %v, want a finite number >= 0", name, v)
			}
			total += v
			found = true
		}
	}
	if !found {
		return 0, errors.Errorf("metric %s missing", name)
	}
	if math.IsInf(total, 0) {
		return 0, errors.Errorf("metric %s overflows: its samples sum to %v", name, total)
	}
	return total, nil
}

func sampleValue(name string, t dto.MetricType, m *dto.Metric) (float64, error) {
	switch t {
	case dto.MetricType_GAUGE:
		if m.GetGauge() == nil {
			return 0, errors.Errorf("metric %s has a sample without a gauge value", name)
		}
		return m.GetGauge().GetValue(), nil
	case dto.MetricType_UNTYPED:
		if m.GetUntyped() == nil {
			return 0, errors.Errorf("metric %s has a sample without an untyped value", name)
		}
		return m.GetUntyped().GetValue(), nil
	default:
		return 0, errors.Errorf("metric %s has type %s, want gauge or untyped", name, t)
	}
}
