package scrape

import (
	"bytes"
	"io"
	"math"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protodelim"

	"github.com/crossplane/function-sdk-go/errors"
)

// Queries are one pod's drain gauges, each summed over all its samples.
type Queries struct {
	Running   float64
	Suspended float64
}

// Parse extracts the drain gauges from a metrics body served with the given
// Content-Type. It is pure: no I/O beyond the bytes it is handed. maxBytes is
// the scrape's body limit: a longer body is refused, and no single
// allocation made while decoding it is larger than the limit or the body.
//
// Unlike the original, which matched only unlabelled sample lines, every
// sample of a family counts, so an engine that adds labels still reports its
// queries instead of looking "missing". A family must be a gauge or untyped,
// and every sample a finite, non-negative number: a negative sample could
// otherwise cancel a positive one and fake a drained pod.
func Parse(body []byte, contentType string, maxBytes int64) (Queries, error) {
	if int64(len(body)) > maxBytes {
		return Queries{}, errors.Errorf("metrics body of %d bytes exceeds the limit of %d bytes", len(body), maxBytes)
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

// decode honours the response's Content-Type: delimited protobuf when the
// server says so, the text format otherwise (expfmt's own fallback, which
// also reads OpenMetrics). Names are validated as UTF-8 rather than the
// legacy charset, explicitly, because prometheus/common no longer has a
// usable default and a legacy-only parser would reject a whole body over one
// quoted name unrelated to the two gauges we need.
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
	p := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, errors.Wrap(err, "cannot decode text metrics")
	}
	fams := make([]*dto.MetricFamily, 0, len(byName))
	for _, mf := range byName {
		fams = append(fams, mf)
	}
	return fams, nil
}

// decodeProtoDelim reads varint-length-delimited MetricFamily messages.
// expfmt's own decoder trusts the length prefix (MaxSize -1) and allocates
// whatever it says before reading: a prefix near 2^63 panics, one of a TiB
// exhausts memory, for every tenant of the process. Here a prefix may claim
// no more than the body limit and no more than the bytes actually left, so
// a message buffer is never larger than the body already in hand.
// Names are checked as expfmt checks them.
func decodeProtoDelim(body []byte, maxBytes int64) ([]*dto.MetricFamily, error) {
	r := bytes.NewReader(body)
	var fams []*dto.MetricFamily
	for i := 0; ; i++ {
		limit := min(maxBytes, int64(r.Len()))
		mf := &dto.MetricFamily{}
		err := protodelim.UnmarshalOptions{MaxSize: limit}.UnmarshalFrom(r, mf)
		if errors.Is(err, io.EOF) {
			return fams, nil
		}
		var tooLarge *protodelim.SizeTooLargeError
		switch {
		case errors.As(err, &tooLarge) && tooLarge.Size > uint64(maxBytes):
			return nil, errors.Errorf("message %d claims %d bytes, more than the limit of %d bytes", i, tooLarge.Size, maxBytes)
		case errors.As(err, &tooLarge):
			return nil, errors.Errorf("message %d claims %d bytes, but the body ends %d bytes later", i, tooLarge.Size, r.Len())
		case err != nil:
			return nil, errors.Wrapf(err, "cannot decode message %d", i)
		}
		if err := validNames(mf); err != nil {
			return nil, errors.Wrapf(err, "invalid message %d", i)
		}
		fams = append(fams, mf)
	}
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
