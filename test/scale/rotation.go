package scale

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/crossplane/function-sdk-go/errors"
)

// A Rotation is what a signing-key rotation phase measured beyond what every
// phase does: how much of the instance's own work its engines cause. The
// instance reads every engine's routing Service on every call, so its work
// is its calls times its engines; whether the calls grow with the engines
// decides whether the rotation's cost grows with their square.
type Rotation struct {
	// Composite is the instance's composite.
	Composite string
	// Steps are the instance's key states in the order they were first
	// seen; the first is the one the rotation started from.
	Steps []RotationStep
	// Done is when every engine was stable on the last key set and the
	// retired key's Certificate was gone; zero when the phase timed out.
	Done RotationStep
	// Calls is how many times the function was called for Composite in
	// the phase (its debug log's lines that end a call).
	Calls int
	// ComposeSeconds is the function's compose_duration_seconds of the
	// instance kind over the phase: its time inside those calls.
	ComposeSeconds float64
	// Advanced is by how many generations the engines' active generations
	// advanced in the phase, all together.
	Advanced int64
	// Services is how many routing Services the instance requires, and
	// ServiceBytes the size of them as JSON as the API server serves them
	// (managed fields included, as Crossplane passes them on), at the
	// phase's end: what each call is sent about the engines.
	Services     int
	ServiceBytes int
}

// A RotationStep is one key state of the instance, when it was first seen
// (since the phase started) and how many calls for the instance the
// function had logged by then.
type RotationStep struct {
	Keys  string
	At    time.Duration
	Calls int
}

// Markdown renders the rotation as two tables: its figures, and its steps.
func (r *Rotation) Markdown(engines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nSigning-key rotation of the instance's composite `%s` (%d engines):\n\n| | |\n|---|---:|\n", r.Composite, engines)
	steps := max(len(r.Steps)-1, 0)
	fmt.Fprintf(&b, "| rotation steps seen | %d |\n", steps)
	fmt.Fprintf(&b, "| function calls for the instance | %d |\n", r.Calls)
	fmt.Fprintf(&b, "| function calls for the instance per engine | %s |\n", ratio(float64(r.Calls), float64(engines)))
	fmt.Fprintf(&b, "| function calls for the instance per step | %s |\n", ratio(float64(r.Calls), float64(steps)))
	fmt.Fprintf(&b, "| the function's time composing the instance | %.2f s (%s ms per call) |\n",
		r.ComposeSeconds, ratio(1000*r.ComposeSeconds, float64(r.Calls)))
	fmt.Fprintf(&b, "| engine generations advanced | %d (%s per engine) |\n", r.Advanced, ratio(float64(r.Advanced), float64(engines)))
	if r.Services > 0 {
		fmt.Fprintf(&b, "| routing Services sent per call | %d (%s KiB as JSON, %s KiB each) |\n",
			r.Services, kib(r.ServiceBytes), kib(r.ServiceBytes/r.Services))
		fmt.Fprintf(&b, "| routing Services sent in all (calls × Services) | %d (%s MiB as JSON) |\n",
			r.Calls*r.Services, mib(r.Calls*r.ServiceBytes))
	}
	b.WriteString("\n| step | keys first seen | at | took | calls for the instance |\n|---|---|---:|---:|---:|\n")
	for i, s := range r.Steps {
		if i == 0 {
			fmt.Fprintf(&b, "| start | %s | %s | — | — |\n", s.Keys, seconds(s.At))
			continue
		}
		prev := r.Steps[i-1]
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %d |\n", i, s.Keys, seconds(s.At), seconds(s.At-prev.At), s.Calls-prev.Calls)
	}
	if len(r.Steps) > 0 && r.Done.At > 0 {
		prev := r.Steps[len(r.Steps)-1]
		fmt.Fprintf(&b, "| done | %s | %s | %s | %d |\n", r.Done.Keys, seconds(r.Done.At), seconds(r.Done.At-prev.At), r.Done.Calls-prev.Calls)
	}
	return b.String()
}

func kib(n int) string { return fmt.Sprintf("%.1f", float64(n)/(1<<10)) }

func mib(n int) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

// HistogramSeries reads the count and sum of the histogram name's series
// whose label has value, from a Prometheus text exposition.
func HistogramSeries(r io.Reader, name, label, value string) (count, sum float64, err error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return 0, 0, errors.Wrap(err, "cannot parse metrics")
	}
	for _, m := range fams[name].GetMetric() {
		if labels(m)[label] == value {
			h := m.GetHistogram()
			return float64(h.GetSampleCount()), h.GetSampleSum(), nil
		}
	}
	return 0, 0, nil
}
