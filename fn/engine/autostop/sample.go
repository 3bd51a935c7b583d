package autostop

// Sample is the activity observed on one call: the sum of
// firebolt_running_queries + firebolt_suspended_queries over the Running
// pods of the active generation, or the scrape's failure. The zero Sample is
// NotSampled.
type Sample struct {
	kind    sampleKind
	queries int64
	failure string
}

type sampleKind int

const (
	notSampled sampleKind = iota
	observed
	failed
)

// NotSampled is a call that did not scrape: the engine is at zero, or the
// composer sampled less than pollInterval ago.
func NotSampled() Sample { return Sample{} }

// Observed is a successful scrape that found queries running or suspended.
func Observed(queries int64) Sample { return Sample{kind: observed, queries: queries} }

// Failed is a scrape that failed, with why. Any failure counts: a pod that
// did not answer, no Running pod, no active generation.
func Failed(why string) Sample { return Sample{kind: failed, failure: why} }

// Equal reports whether two samples say the same (go-cmp uses it).
func (s Sample) Equal(o Sample) bool { return s == o }
