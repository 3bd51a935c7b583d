package scrape

import (
	"bytes"
	"io"
	"math"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/crossplane/function-sdk-go/errors"
)

// Queries are one pod's drain gauges, each summed over all its samples.
type Queries struct {
	Running   float64
	Suspended float64
}

// Parse extracts the drain gauges from a metrics body served with the given
// Content-Type. It is pure: no I/O beyond the bytes it is handed.
//
// Unlike the original, which matched only unlabelled sample lines, every
// sample of a family counts, so an engine that adds labels still reports its
// queries instead of looking "missing". A family must be a gauge or untyped,
// and every sample a finite, non-negative number: a negative sample could
// otherwise cancel a positive one and fake a drained pod.
func Parse(body []byte, contentType string) (Queries, error) {
	fams, err := decode(body, contentType)
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
func decode(body []byte, contentType string) ([]*dto.MetricFamily, error) {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	if expfmt.ResponseFormat(h).FormatType() == expfmt.TypeProtoDelim {
		format := expfmt.NewFormat(expfmt.TypeProtoDelim).WithEscapingScheme(model.NoEscaping)
		dec := expfmt.NewDecoder(bytes.NewReader(body), format)
		var fams []*dto.MetricFamily
		for {
			mf := &dto.MetricFamily{}
			err := dec.Decode(mf)
			if errors.Is(err, io.EOF) {
				return fams, nil
			}
			if err != nil {
				return nil, errors.Wrap(err, "cannot decode protobuf metrics")
			}
			fams = append(fams, mf)
		}
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
