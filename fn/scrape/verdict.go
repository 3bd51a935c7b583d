package scrape

import (
	"strconv"
	"strings"
)

// maxMessageItems keeps a condition message readable when a large generation
// fails as a whole; the count of the rest is still reported.
const maxMessageItems = 3

// PodResult is one Running pod's scrape: its gauges, or why they could not be
// read.
type PodResult struct {
	Pod       string
	Running   float64
	Suspended float64
	Err       error
}

// Observation is everything one check saw, for callers that need more than a
// drain verdict (auto-stop sums the same gauges over the active generation).
type Observation struct {
	// Err is set when the check could not get as far as scraping: listing
	// failed, or the client is misconfigured. Pods and Skipped are then empty.
	Err error
	// Pods holds one result per pod in phase Running, sorted by name.
	Pods []PodResult
	// Skipped names the selected pods not in phase Running, sorted.
	Skipped []string
}

// Verdict is the drain check's answer, a plain comparable value for the
// composer's pure compute layer.
type Verdict struct {
	// Drained is true iff every Running pod was scraped and reports zero
	// running and zero suspended queries.
	Drained bool
	// Failing is true when the check itself failed (list, transport, status,
	// body, parse): the condition reason is then DrainCheckFailing. A pod that
	// is merely still busy is not a failure.
	Failing bool
	// Message says why the generation is not drained, naming pods, sorted and
	// bounded; empty when drained.
	Message string
}

// Decide turns an observation into a verdict. Pure.
//
// As the original (§2.6): a generation without pods is drained, and pods not
// in phase Running are skipped. A Pending pod never started the engine and a
// Succeeded, Failed or Unknown one has no engine we could reach, so none of
// them holds queries we could wait for; waiting on them would hold the old
// generation forever. A terminating pod keeps phase Running while its engine
// finishes in-flight queries, so it is still scraped.
func Decide(o Observation) Verdict {
	if o.Err != nil {
		return Verdict{Failing: true, Message: o.Err.Error()}
	}
	var failures, busy []string
	for _, p := range o.Pods {
		switch {
		case p.Err != nil:
			failures = append(failures, "pod "+p.Pod+": "+p.Err.Error())
		case p.Running != 0 || p.Suspended != 0:
			busy = append(busy, "pod "+p.Pod+": "+formatCount(p.Running)+" running, "+formatCount(p.Suspended)+" suspended queries")
		}
	}
	switch {
	case len(failures) > 0:
		return Verdict{Failing: true, Message: join(failures)}
	case len(busy) > 0:
		return Verdict{Message: join(busy)}
	default:
		return Verdict{Drained: true}
	}
}

func formatCount(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func join(items []string) string {
	if len(items) <= maxMessageItems {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxMessageItems], "; ") + "; and " + strconv.Itoa(len(items)-maxMessageItems) + " more"
}
