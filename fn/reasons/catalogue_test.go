package reasons_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/fn/reasons"
)

// conditionSink is where every condition the function writes passes.
var conditionSink = sink{
	pkg: "github.com/firebolt-db/firebolt-crossplane/fn/composite", typ: "Condition",
	reasonField: "Reason", typeField: "Type",
}

// notSet are pairs the scan finds that the code never sets: the scan
// follows a struct field to every value stored into it anywhere, and these
// values share a field with values of another condition.
var notSet = map[pair]string{
	{"GatewayReady", "IDChangeRefused"}:               "the refused id blocks the metadata service only (instance.status: c.idRefused)",
	{"GatewayReady", "PostgresEnsureFailed"}:          "PostgreSQL blocks only the metadata service (instance.compute: metaBlock := db.block)",
	{"GatewayReady", "PostgresSecretPreflightFailed"}: "PostgreSQL blocks only the metadata service (instance.compute: metaBlock := db.block)",
	{"MetadataReady", "EnsureFailed"}:                 "only the gateway's configuration can fail to build (instance.components: gateway)",
}

// dynamicSources are the values reaching a condition's reason that are
// not constants of this code, each with why that is right.
var dynamicSources = map[string]string{
	"fn/composite/status.go: m[k].(string)": "observed conditions read back from the composite: a copy of what was set",
	"fn/engine/conditions.go: b.String()":   "a stuck StatefulSet's Warning event reason, as EngineReady's reason (documented under StatefulSetWarning)",
}

type pair struct{ typ, reason string }

// TestCatalogueMatchesCode fails when the code can set a reason the
// catalogue lacks, or the catalogue lists one the code cannot set.
func TestCatalogueMatchesCode(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scan(root, conditionSink, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.pairs) < 10 {
		t.Fatalf("the scan found %d reasons: it no longer sees the function's conditions", len(s.pairs))
	}
	for _, p := range compare(s, reasons.All(), notSet) {
		t.Error(p)
	}
	want := make(map[string]bool, len(dynamicSources))
	for d := range dynamicSources {
		want[d] = true
	}
	if diff := cmp.Diff(sorted(want), sorted(s.dynamic)); diff != "" {
		t.Errorf("values reaching a condition reason that the scan cannot follow to a constant (-accepted +found):\n%s"+
			"a new one is a reason the catalogue cannot list: set reasons from constants, or add it to dynamicSources with why", diff)
	}
	types := map[string]bool{}
	for _, ts := range s.pairs {
		for typ := range ts {
			types[typ] = true
		}
	}
	got := make([]string, 0, len(types))
	for _, c := range reasons.Conditions() {
		got = append(got, c.Type)
	}
	if diff := cmp.Diff(sorted(types), got); diff != "" {
		t.Errorf("condition types the code sets (-) against reasons.Conditions (+):\n%s", diff)
	}
}

// compare lists each way the catalogue and the scan disagree.
func compare(s scanned, entries []reasons.Entry, notSet map[pair]string) []string {
	var problems []string
	listed := map[pair]bool{}
	byReason := map[string]bool{}
	for _, e := range entries {
		listed[pair{e.Type, e.Reason}] = true
		byReason[e.Reason] = true
	}
	for _, r := range sorted(keys(s.pairs)) {
		ts := s.pairs[r]
		if ts["*"] {
			if !byReason[r] {
				problems = append(problems, fmt.Sprintf("reason %s (of a condition type the scan cannot tell) is set by the code and missing from the catalogue", r))
			}
			continue
		}
		for _, typ := range sorted(ts) {
			p := pair{typ, r}
			if _, skip := notSet[p]; skip {
				if listed[p] {
					problems = append(problems, fmt.Sprintf("%s/%s is catalogued but listed in notSet", typ, r))
				}
				continue
			}
			if !listed[p] {
				problems = append(problems, fmt.Sprintf("%s/%s is set by the code and missing from the catalogue (fn/reasons/catalogue.go)", typ, r))
			}
		}
	}
	for _, e := range entries {
		ts := s.pairs[e.Reason]
		if !ts[e.Type] && !ts["*"] {
			problems = append(problems, fmt.Sprintf("%s/%s is catalogued but the code no longer sets it", e.Type, e.Reason))
		}
	}
	for p := range notSet {
		if !s.pairs[p.reason][p.typ] {
			problems = append(problems, fmt.Sprintf("notSet lists %s/%s, which the scan no longer finds: remove it", p.typ, p.reason))
		}
	}
	sort.Strings(problems)
	return problems
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func TestCompare(t *testing.T) {
	found := scanned{pairs: map[string]map[string]bool{
		"Ready":  {"A": true, "B": true},
		"Broken": {"A": true},
		"Any":    {"*": true},
	}}
	entry := func(typ, reason string) reasons.Entry { return reasons.Entry{Type: typ, Reason: reason} }
	cases := map[string]struct {
		entries []reasons.Entry
		notSet  map[pair]string
		want    []string
	}{
		"agree": {
			entries: []reasons.Entry{entry("A", "Ready"), entry("B", "Ready"), entry("A", "Broken"), entry("C", "Any")},
		},
		"a reason missing": {
			entries: []reasons.Entry{entry("A", "Ready"), entry("B", "Ready"), entry("C", "Any")},
			want:    []string{"A/Broken is set by the code and missing from the catalogue (fn/reasons/catalogue.go)"},
		},
		"a reason under the wrong type": {
			entries: []reasons.Entry{entry("A", "Ready"), entry("B", "Ready"), entry("B", "Broken"), entry("C", "Any")},
			want: []string{
				"A/Broken is set by the code and missing from the catalogue (fn/reasons/catalogue.go)",
				"B/Broken is catalogued but the code no longer sets it",
			},
		},
		"a reason the code no longer sets": {
			entries: []reasons.Entry{entry("A", "Ready"), entry("B", "Ready"), entry("A", "Broken"), entry("C", "Any"), entry("A", "Gone")},
			want:    []string{"A/Gone is catalogued but the code no longer sets it"},
		},
		"an untyped reason missing": {
			entries: []reasons.Entry{entry("A", "Ready"), entry("B", "Ready"), entry("A", "Broken")},
			want:    []string{"reason Any (of a condition type the scan cannot tell) is set by the code and missing from the catalogue"},
		},
		"an over-approximation excused": {
			entries: []reasons.Entry{entry("A", "Ready"), entry("A", "Broken"), entry("C", "Any")},
			notSet:  map[pair]string{{"B", "Ready"}: "why"},
		},
		"an excuse that is catalogued or stale": {
			entries: []reasons.Entry{entry("A", "Ready"), entry("B", "Ready"), entry("A", "Broken"), entry("C", "Any")},
			notSet:  map[pair]string{{"B", "Ready"}: "why", {"B", "Gone"}: "why"},
			want: []string{
				"B/Ready is catalogued but listed in notSet",
				"notSet lists B/Gone, which the scan no longer finds: remove it",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, compare(found, tc.entries, tc.notSet)); diff != "" {
				t.Errorf("compare (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScan runs the scan on small modules, to show each flow it follows
// and that a reason it cannot follow is reported, not lost.
func TestScan(t *testing.T) {
	const head = "package cond\n\ntype Condition struct{ Type, Status, Reason string }\n\n"
	cases := map[string]struct {
		src         string
		wantPairs   map[string][]string
		wantDynamic []string
	}{
		"keyed literal with constants": {
			src:       `const TypeA, ReasonX = "A", "X"` + "\nvar _ = Condition{Type: TypeA, Reason: ReasonX}\n",
			wantPairs: map[string][]string{"X": {"A"}},
		},
		"positional literal and a literal string": {
			src:       `var _ = Condition{"A", "True", "Lit"}` + "\n",
			wantPairs: map[string][]string{"Lit": {"A"}},
		},
		"assignment to a variable built from a literal": {
			src: `func f(ok bool) Condition {
	c := Condition{Type: "A"}
	if ok {
		c.Status, c.Reason = "True", "Fine"
	} else {
		c.Reason = "Broken"
	}
	return c
}
`,
			wantPairs: map[string][]string{"Fine": {"A"}, "Broken": {"A"}},
		},
		"through a closure's parameter and a field": {
			src: `type rejection struct{ Reason string }
func g(r *rejection) Condition {
	c := func(reason string) Condition { return Condition{Type: "Ready", Reason: reason} }
	if r != nil {
		return c(r.Reason)
	}
	return c("Fine")
}
var _ = g(&rejection{Reason: "Rejected"})
`,
			wantPairs: map[string][]string{"Fine": {"Ready"}, "Rejected": {"Ready"}},
		},
		"through a function's result, a conversion and a tuple": {
			src: `type R string
const RIdle R = "Idle"
func why() (R, error) { return RIdle, nil }
func h() Condition {
	r, _ := why()
	return Condition{Type: "Auto", Reason: string(r)}
}
`,
			wantPairs: map[string][]string{"Idle": {"Auto"}},
		},
		"a copied condition adds nothing": {
			src: `func k(c Condition) Condition { return Condition{Type: c.Type, Reason: c.Reason} }
var _ = Condition{Type: "A", Reason: "X"}
`,
			wantPairs: map[string][]string{"X": {"A"}},
		},
		"a type the scan cannot tell": {
			src:       `func m(typ string) Condition { return Condition{Type: typ, Reason: "X"} }` + "\n",
			wantPairs: map[string][]string{"X": {"*"}},
		},
		"a reason from data is dynamic": {
			src: `func n(m map[string]string) Condition { return Condition{Type: "A", Reason: m["r"]} }
func p(rs []string) (c Condition) {
	for _, r := range rs {
		c = Condition{Type: "B", Reason: r}
	}
	return c
}
`,
			wantPairs:   map[string][]string{},
			wantDynamic: []string{"cond/cond.go: m[\"r\"]", "cond/cond.go: r (range over cond/cond.go)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.26\n")
			write(t, filepath.Join(dir, "cond", "cond.go"), head+tc.src)
			s, err := scan(dir, sink{pkg: "example.com/m/cond", typ: "Condition", reasonField: "Reason", typeField: "Type"}, "./...")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for r, ts := range s.pairs {
				got[r] = sorted(ts)
			}
			if diff := cmp.Diff(tc.wantPairs, got); diff != "" {
				t.Errorf("pairs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDynamic, sorted(s.dynamic), cmpEmpty); diff != "" {
				t.Errorf("dynamic (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(slices.Equal[[]string])

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
