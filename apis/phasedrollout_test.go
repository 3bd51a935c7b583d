package apis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// phasedRolloutSample is examples/phased/sample/base/phasedrollout.yaml: seed
// 004's sample, unchanged.
func phasedRolloutSample(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", "phased", "sample", "base", "phasedrollout.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(b))
}

func TestPhasedRolloutClaims(t *testing.T) {
	sample := func(muts ...func(map[string]any) map[string]any) func(t *testing.T) map[string]any {
		return func(t *testing.T) map[string]any {
			m := phasedRolloutSample(t)
			for _, f := range muts {
				m = f(m)
			}
			return m
		}
	}
	named := func(n string) func(map[string]any) map[string]any {
		return func(m map[string]any) map[string]any { return set(m, "metadata.name", n) }
	}
	urlRule := func(v string) string {
		return `spec.check.query.url: Invalid value: "` + v + `": must be an http or https URL with a host, such as http://prometheus.monitoring:9090, or host[:port][/path], which is plain HTTP`
	}
	runClaims(t, map[string]claimCase{
		"SeedSample": {
			reason: "Seed 004's sample applies unchanged, its scheme-less url included.",
			kind:   "PhasedRollout", obj: sample(),
		},
		"HTTPSURL": {
			reason: "An absolute https URL with a path is accepted.",
			kind:   "PhasedRollout", obj: sample(setf("spec.check.query.url", "https://prometheus.monitoring:9090/prom")),
		},
		"HostOnlyURL": {
			reason: "A host alone is a plain HTTP URL.",
			kind:   "PhasedRollout", obj: sample(setf("spec.check.query.url", "prometheus-operated.monitoring")),
		},
		"SchemeNotHTTP": {
			reason: "A scheme other than http or https is refused.",
			kind:   "PhasedRollout", obj: sample(setf("spec.check.query.url", "ftp://prom:9000")),
			errors: []string{urlRule("ftp://prom:9000")},
		},
		"SchemelessWithCredentials": {
			reason: "Credentials in a scheme-less URL are refused (they would be stored in the claim).",
			kind:   "PhasedRollout", obj: sample(setf("spec.check.query.url", "admin:pw@prom:9000")),
			errors: []string{urlRule("admin:pw@prom:9000")},
		},
		"SchemelessWithQuery": {
			reason: "A query is refused: the function appends /api/v1/query.",
			kind:   "PhasedRollout", obj: sample(setf("spec.check.query.url", "prom:9000/xx?a=b")),
			errors: []string{urlRule("prom:9000/xx?a=b"), `spec.check.query.url: Invalid value: "prom:9000/xx?a=b": must have no query or fragment: the function appends /api/v1/query`},
		},
		"TargetRefMissing": {
			reason: "targetRef is required.",
			kind:   "PhasedRollout", obj: sample(delf("spec.targetRef")),
			errors: []string{`spec.targetRef: Required value`},
		},
		"TargetRefNotAName": {
			reason: "targetRef must be a StatefulSet name.",
			kind:   "PhasedRollout", obj: sample(setf("spec.targetRef", "Web_1")),
			errors: []string{`spec.targetRef: Invalid value: "Web_1": spec.targetRef in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'`},
		},
		"TargetRefImmutable": {
			reason: "Moving a claim to another StatefulSet would leave the first one's partition where it was: refused.",
			kind:   "PhasedRollout", obj: sample(setf("spec.targetRef", "db")), old: sample(),
			errors: []string{`spec.targetRef: Invalid value: "db": spec.targetRef is immutable: set standardRollingUpdate to true, wait for phase suspended, delete this claim and create one for the other StatefulSet`},
		},
		"NameAtCrossplanesLimit": {
			reason: "Crossplane limits claim names to 63 characters, so the field manager provider-kubernetes/<name>-<5> fits in 128.",
			kind:   "PhasedRollout", obj: sample(named(strings.Repeat("a", 63))),
		},
		"NameWithDots": {
			reason: "The name names no Service: any Kubernetes name is accepted.",
			kind:   "PhasedRollout", obj: sample(named("web.v2")),
		},
	})
}

// A claim name over Crossplane's limit is refused, so the Object's field
// manager always fits in the 128 bytes a field manager may have.
func TestPhasedRolloutNameLimit(t *testing.T) {
	s := serversFor(t, "PhasedRollout")
	got := s.claim.admit(set(phasedRolloutSample(t), "metadata.name", strings.Repeat("a", 64)), nil)
	if want := []string{"metadata.name: Too long: may not be more than 63 bytes"}; len(got.Errors) != 1 || got.Errors[0] != want[0] {
		t.Errorf("admission of a 64-character name: %q, want %q", got.Errors, want)
	}
}
