package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
	"github.com/firebolt-db/firebolt-crossplane/fn/promcheck"
)

// GenerationPlaceholder in spec.analysis.query.expr is replaced by the
// number of the generation analysed, so that one expression in Git selects
// each rollout's new pods (label firebolt.io/generation).
const GenerationPlaceholder = "${GENERATION}"

// RequirementAnalysisSecret is the Secret spec.analysis.query.secretRef
// names.
const RequirementAnalysisSecret = "analysis-secret"

// The Analysis condition: whether the generation waiting to be switched to
// has passed its checks.
const (
	TypeAnalysis = "Analysis"

	ReasonAnalysisPassed  = "AnalysisPassed"
	ReasonAnalysisRunning = "AnalysisRunning"
	ReasonAnalysisFailing = "AnalysisFailing"
)

// A Checker runs a check's Prometheus query at a time; *promcheck.Client is
// the real one.
type Checker = promcheck.Runner

// AnalysisSecret is the Secret spec.analysis.query.secretRef names.
type AnalysisSecret struct {
	Resolved bool
	Found    bool
	Data     map[string][]byte
}

// analysisInput is the analysis this call runs, if any: only in creating,
// for a generation that would replace a serving one. The read layer (to
// run a due check) and the machine (to decide) both take it from here, so
// an outcome is never missing when it matters.
func analysisInput(in Inputs, now time.Time) (phased.AnalysisInput, bool) {
	if in.Spec.Analysis == nil || in.Status.Phase != v1alpha1.EnginePhaseCreating {
		return phased.AnalysisInput{}, false
	}
	n, a := in.Status.CurrentGeneration, in.Status.ActiveGeneration
	if a < 0 || a == n || n < 0 || n > v1alpha1.MaxGeneration {
		return phased.AnalysisInput{}, false
	}
	return phased.AnalysisInput{
		Now:        now,
		Check:      *in.Spec.Analysis,
		Generation: int32(n),
		Ready:      podsOf(in, n).Ready,
		Previous:   in.Status.Analysis,
	}, true
}

// analysisQuery is the query of generation gen.
func analysisQuery(in Inputs, gen int32) v1alpha1.PrometheusQuery {
	q := in.Spec.Analysis.Query
	q.Expr = strings.ReplaceAll(q.Expr, GenerationPlaceholder, strconv.Itoa(int(gen)))
	return q
}

// runAnalysis runs the check of a due analysis with the Secret's
// credentials.
func runAnalysis(ctx context.Context, check Checker, in Inputs, gen int32, now time.Time) promcheck.Outcome {
	return promcheck.RunWithSecret(ctx, check, analysisQuery(in, gen), "spec.analysis.query.secretRef", in.Namespace,
		promcheck.Secret{Found: in.AnalysisSecret.Found, Data: in.AnalysisSecret.Data}, now)
}

// analysisPasses runs the analysis of generation n, whose pods are ready
// or not, and says whether the switch may go ahead. Without an analysis
// (none asked for, or a first generation) it always may.
func (m *machine) analysisPasses(n int, now time.Time) bool {
	ai, ok := analysisInput(m.in, now)
	if !ok || int(ai.Generation) != n {
		return true
	}
	if o := m.sig.Analysis; o != nil {
		ai.CheckOutcome = &phased.Outcome{Succeeded: o.Succeeded, Err: o.Cause != "", Message: o.Message}
	}
	d := phased.Analyze(ai)
	m.next.Analysis = d.Status
	for _, e := range d.Events {
		m.results = append(m.results, Result{Severity: SeverityWarning, Reason: e.Reason, Message: BoundMessage(e.Message)})
	}
	if !d.Passed {
		m.ttl = d.TTL
		if m.ttl == 0 {
			m.ttl = ttlCreating
		}
		return false
	}
	return true
}

// analysisCondition is the Analysis condition, set only for an engine with
// spec.analysis that has analysed a generation.
func analysisCondition(in Inputs, st *v1alpha1.AnalysisStatus) (Condition, bool) {
	if in.Spec.Analysis == nil || st == nil {
		return Condition{}, false
	}
	q := analysisQuery(in, st.Generation).Expr
	c := Condition{Type: TypeAnalysis, Status: metav1.ConditionUnknown, Reason: ReasonAnalysisRunning}
	last := ""
	if st.LastCheckMessage != "" {
		last = "; last check: " + st.LastCheckMessage
	}
	switch {
	case st.Passed:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonAnalysisPassed
		c.Message = fmt.Sprintf("generation %d passed: %d checks in a row of %s returned data", st.Generation, st.ConsecutiveSuccessfulChecks, q)
	case st.ConsecutiveFailedChecks > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonAnalysisFailing
		c.Message = fmt.Sprintf("generation %d is held before the switch: %d checks in a row of %s failed%s", st.Generation, st.ConsecutiveFailedChecks, q, last)
	default:
		c.Message = fmt.Sprintf("generation %d is analysed before the switch: %s, %d successful checks in a row of %s%s",
			st.Generation, st.Status, st.ConsecutiveSuccessfulChecks, q, last)
	}
	c.Message = BoundMessage(c.Message)
	return c, true
}
