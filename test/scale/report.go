package scale

import (
	"fmt"
	"strings"
	"time"
)

// A Phase is one measured step of a run: creating the engines, editing
// their class, or idling.
type Phase struct {
	Name string
	// From and To are when the phase's first and last counters were read.
	From, To time.Time
	// Took is the time from the step's start until every engine was
	// stable, or the idle time.
	Took time.Duration
	// Settles is whether Took is a time to all stable (not an idle time).
	Settles bool
	// TimedOut is set when the engines were not all stable within the
	// bound: Took is the bound, and Stable says how many were.
	TimedOut bool
	Stable   int
	// Requests are the API requests the control plane served, less the
	// harness's own.
	Requests Counts
	// Harness is how many requests the harness itself made (waits, fake
	// pods, volumes, package runtime), already taken out of Requests. The
	// claims it applies for the measurement are not among them.
	Harness float64
	// CPU is CPU seconds per process name.
	CPU map[string]float64
	// BreakerOpens is how often Crossplane's XR circuit breaker opened
	// (its circuit_breaker_opens_total).
	BreakerOpens float64
	// BreakerLogLines counts Crossplane's "Circuit breaker is open" log
	// lines: one per reconcile of a composite while its breaker is open.
	BreakerLogLines int
	// Steady, for an idle phase, says from what state it was measured
	// (see Steady).
	Steady string
}

// A Report is one run of `make scale`.
type Report struct {
	Engines int
	Phases  []Phase
	// Processes orders the CPU rows.
	Processes []string
	// FunctionPeakRSS is the function's VmHWM at the end of the run, in
	// bytes.
	FunctionPeakRSS int64
	// TopRequests bounds the rows of the by-resource table; the rest are
	// summed into one row.
	TopRequests int
	// Rotation is set by a run with a signing-key rotation phase.
	Rotation *Rotation
}

// Markdown renders the report as two tables, a summary and the requests by
// resource and verb, fit for docs/performance.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	row := func(name string, cell func(p *Phase) string) {
		b.WriteString("| " + name + " |")
		for i := range r.Phases {
			b.WriteString(" " + cell(&r.Phases[i]) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("| " + fmt.Sprintf("%d engines", r.Engines) + " |")
	for _, p := range r.Phases {
		b.WriteString(" " + p.Name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(r.Phases)) + "\n")
	row("time to all `stable`", func(p *Phase) string {
		switch {
		case p.TimedOut:
			return fmt.Sprintf("timed out after %s (%d of %d stable)", seconds(p.Took), p.Stable, r.Engines)
		case !p.Settles:
			return "—"
		}
		return seconds(p.Took)
	})
	row("API requests", func(p *Phase) string { return count(p.Requests.Total(false)) })
	row("API writes", func(p *Phase) string { return count(p.Requests.Total(true)) })
	row("writes per engine", func(p *Phase) string { return ratio(p.Requests.Total(true), float64(r.Engines)) })
	row("requests per engine per minute", func(p *Phase) string {
		return ratio(p.Requests.Total(false), float64(r.Engines)*p.Took.Minutes())
	})
	for _, name := range r.Processes {
		row("CPU-s "+name, func(p *Phase) string { return fmt.Sprintf("%.1f", p.CPU[name]) })
	}
	row("circuit breaker opened", func(p *Phase) string { return count(p.BreakerOpens) })
	row("\"Circuit breaker is open\" log lines", func(p *Phase) string { return fmt.Sprint(p.BreakerLogLines) })
	row("harness's own requests (waits, fake kubelet, provisioner and package runtime; left out above)", func(p *Phase) string { return count(p.Harness) })
	fmt.Fprintf(&b, "\nThe function's peak resident memory (VmHWM, whole run): %.1f MiB.\n", float64(r.FunctionPeakRSS)/(1<<20))
	if r.Rotation != nil {
		b.WriteString(r.Rotation.Markdown(r.Engines))
	}

	b.WriteString("\nAPI requests by resource and verb (`apiserver_request_total`, less the harness's own):\n\n")
	b.WriteString("| resource | verb |")
	for _, p := range r.Phases {
		b.WriteString(" " + p.Name + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(r.Phases)) + "\n")
	all := make([]Counts, len(r.Phases))
	for i := range r.Phases {
		all[i] = r.Phases[i].Requests
	}
	keys := Keys(all...)
	top := len(keys)
	if r.TopRequests > 0 && top > r.TopRequests {
		top = r.TopRequests
	}
	for _, k := range keys[:top] {
		b.WriteString("| " + k.ResourceName() + " | " + k.Verb + " |")
		for _, c := range all {
			b.WriteString(" " + count(c[k]) + " |")
		}
		b.WriteString("\n")
	}
	if rest := keys[top:]; len(rest) > 0 {
		fmt.Fprintf(&b, "| %d more | |", len(rest))
		for _, c := range all {
			var s float64
			for _, k := range rest {
				s += c[k]
			}
			b.WriteString(" " + count(s) + " |")
		}
		b.WriteString("\n")
	}
	for i := range r.Phases {
		r.perEngine(&b, &r.Phases[i])
	}
	return b.String()
}

// perEngine writes an idle phase's requests per engine per minute by
// resource and verb: the idle cost's own unit.
func (r *Report) perEngine(b *strings.Builder, p *Phase) {
	if p.Settles || p.Took <= 0 || r.Engines <= 0 {
		return
	}
	per := float64(r.Engines) * p.Took.Minutes()
	from := ""
	if p.Steady != "" {
		from = ", from steady state (" + p.Steady + ")"
	}
	fmt.Fprintf(b, "\n%s%s: API requests per engine per minute by resource and verb:\n\n", p.Name, from)
	b.WriteString("| resource | verb | per engine per minute |\n|---|---|---:|\n")
	for _, k := range Keys(p.Requests) {
		if p.Requests[k] > 0 {
			fmt.Fprintf(b, "| %s | %s | %.3f |\n", k.ResourceName(), k.Verb, p.Requests[k]/per)
		}
	}
	fmt.Fprintf(b, "| all | | %.3f |\n", p.Requests.Total(false)/per)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func count(v float64) string { return fmt.Sprintf("%.0f", v) }

// ratio is a/b with two decimals, or "—" when b is zero.
func ratio(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a/b)
}
