// Package scale holds the pure parts of `make scale`: counting API requests
// by resource and verb from the API server's metrics, classifying the
// harness's own requests so they can be taken out, reading CPU time and peak
// memory from /proc, and rendering the report. The runner that drives a
// local control plane is test/e2e/cmd/scale.
package scale

import (
	"io"
	"maps"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/crossplane/function-sdk-go/errors"
)

// RequestMetric is the API server's counter of the requests it served.
const RequestMetric = "apiserver_request_total"

// Key is what the report groups requests by: the resource a request was
// for and the API server's verb for it (LIST and WATCH apart from GET,
// APPLY apart from PATCH). The status code, scope and version are summed.
type Key struct {
	Group       string
	Resource    string
	Subresource string
	Verb        string
}

// String names the resource as kubectl would, with the subresource after a
// slash, then the verb: "fireboltengines.compute.firebolt.io/status PUT".
func (k Key) String() string { return k.ResourceName() + " " + k.Verb }

// ResourceName is "resource[.group][/subresource]".
func (k Key) ResourceName() string {
	s := k.Resource
	if k.Group != "" {
		s += "." + k.Group
	}
	if k.Subresource != "" {
		s += "/" + k.Subresource
	}
	return s
}

// writeVerbs are the verbs that change what etcd stores.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// IsWrite tells whether a request of verb changes stored state.
func IsWrite(verb string) bool { return writeVerbs[verb] }

// Counts is a number of requests per Key.
type Counts map[Key]float64

// ParseRequests reads the API server's metrics in the Prometheus text format
// and sums apiserver_request_total by Key. Requests for no resource
// (/metrics, /readyz, /openapi) are left out: they are the probes' and the
// harness's, not the product's.
func ParseRequests(r io.Reader) (Counts, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, errors.Wrap(err, "cannot parse the API server's metrics")
	}
	fam, ok := fams[RequestMetric]
	if !ok {
		return nil, errors.Errorf("the API server's metrics have no %s", RequestMetric)
	}
	if fam.GetType() != dto.MetricType_COUNTER {
		return nil, errors.Errorf("%s is a %s, not a counter", RequestMetric, fam.GetType())
	}
	out := Counts{}
	for _, m := range fam.GetMetric() {
		l := labels(m)
		if l["resource"] == "" {
			continue
		}
		k := Key{Group: l["group"], Resource: l["resource"], Subresource: l["subresource"], Verb: l["verb"]}
		out[k] += m.GetCounter().GetValue()
	}
	return out, nil
}

// SumCounter reads metrics in the Prometheus text format and sums every
// series of the counter name; a counter no series of which exists yet is 0.
func SumCounter(r io.Reader, name string) (float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return 0, errors.Wrap(err, "cannot parse metrics")
	}
	var sum float64
	for _, m := range fams[name].GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum, nil
}

func labels(m *dto.Metric) map[string]string {
	l := make(map[string]string, len(m.GetLabel()))
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// Sub is after minus before, per Key, without the keys that did not move.
// A counter never decreases while its process runs, so one that did means
// the API server restarted between the two reads: the difference would be
// meaningless, and Sub says so.
func Sub(after, before Counts) (Counts, error) {
	out := Counts{}
	for k, a := range after {
		d := a - before[k]
		if d < 0 {
			return nil, errors.Errorf("%s went down from %g to %g: the API server restarted between the two reads", k, before[k], a)
		}
		if d > 0 {
			out[k] = d
		}
	}
	for k, b := range before {
		if _, ok := after[k]; !ok && b > 0 {
			return nil, errors.Errorf("%s disappeared: the API server restarted between the two reads", k)
		}
	}
	return out, nil
}

// Without is c less what the harness itself asked for (its own polling),
// never below zero: the API server may not have finished counting a
// request the harness has already counted.
func (c Counts) Without(own Counts) Counts {
	out := Counts{}
	for k, v := range c {
		if d := v - own[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// Total is the number of requests in c; writes only when writes is set.
func (c Counts) Total(writes bool) float64 {
	var t float64
	for k, v := range c {
		if !writes || IsWrite(k.Verb) {
			t += v
		}
	}
	return t
}

// Add adds o into c.
func (c Counts) Add(o Counts) {
	for k, v := range o {
		c[k] += v
	}
}

// Keys returns the keys of every given Counts, most requests over all of
// them first, then by name, so tables read the same on every run.
func Keys(cs ...Counts) []Key {
	all := Counts{}
	for _, c := range cs {
		all.Add(c)
	}
	keys := slices.Collect(maps.Keys(all))
	slices.SortFunc(keys, func(a, b Key) int {
		if all[a] != all[b] {
			if all[a] > all[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a.String(), b.String())
	})
	return keys
}
