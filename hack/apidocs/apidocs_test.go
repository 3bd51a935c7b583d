package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/firebolt-db/firebolt-crossplane/fn/reasons"
)

// TestCommittedPagesAreCurrent renders every generated page from the
// committed XRDs and the reasons catalogue and fails when docs/ holds
// something else: run make generate and commit the result. A reason added
// to the code is missing from the catalogue first (fn/reasons' test), then,
// once catalogued, from the committed troubleshooting page (this test).
func TestCommittedPagesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := Pages(filepath.Join(root, "apis", "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ReferencePage, TroubleshootingPage} {
		got, err := os.ReadFile(filepath.Join(root, "docs", name))
		if err != nil {
			t.Errorf("docs/%s is generated but not committed; run make generate: %v", name, err)
			continue
		}
		if diff := cmp.Diff(strings.Split(string(pages[name]), "\n"), strings.Split(string(got), "\n")); diff != "" {
			t.Errorf("docs/%s is stale; run make generate (-generated +committed):\n%s", name, diff)
		}
	}
}

// TestPagesAreDeterministic renders twice: map order must not leak into a
// page, or the staleness test would fail at random.
func TestPagesAreDeterministic(t *testing.T) {
	dir := filepath.Join("..", "..", "apis", "definitions")
	a, err := Pages(dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := Pages(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("two renders differ:\n%s", diff)
		}
	}
}

// TestTroubleshootingListsEveryReason reads the rendered page back: every
// catalogued reason is in its condition's table with its meaning and action.
func TestTroubleshootingListsEveryReason(t *testing.T) {
	page := string(Troubleshooting())
	for _, e := range reasons.All() {
		at := strings.Index(page, "\n## "+e.Type+"\n")
		if at < 0 {
			t.Errorf("no section %s", e.Type)
			continue
		}
		section := page[at:]
		if next := strings.Index(section[1:], "\n## "); next >= 0 {
			section = section[:next+1]
		}
		row := "| `" + e.Reason + "` | " + e.Status + " | " + cell(e.Meaning) + " | " + cell(e.Action) + " |"
		if !strings.Contains(section, row) {
			t.Errorf("section %s has no row %s", e.Type, row)
		}
	}
}

const xrd = `apiVersion: apiextensions.crossplane.io/v1
kind: CompositeResourceDefinition
metadata:
  name: xwidgets.example.org
spec:
  group: example.org
  names: {kind: XWidget, plural: xwidgets, shortNames: [xw]}
  claimNames: {kind: Widget, plural: widgets, shortNames: [w]}
  versions:
  - name: v1
    served: true
    referenceable: true
    additionalPrinterColumns:
    - {name: SIZE, jsonPath: .spec.size, type: integer}
    schema:
      openAPIV3Schema:
        description: A widget for <things>.
        x-kubernetes-validations:
        - {rule: "size(self.metadata.name) <= 9", message: "name too long"}
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size:
                type: integer
                format: int32
                minimum: 1
                maximum: 10
                exclusiveMaximum: true
                default: 3
                description: |-
                  Size in *units*.
                  Second line with ` + "`a_b`" + `.
              mode:
                type: string
                enum: [fast, slow]
              name:
                type: string
                minLength: 1
                maxLength: 8
                pattern: '^[a-z]+$'
                x-kubernetes-validations:
                - {rule: self == oldSelf, message: name is immutable}
              port:
                x-kubernetes-int-or-string: true
                anyOf: [{type: integer}, {type: string}]
              tags:
                type: array
                maxItems: 4
                x-kubernetes-list-type: set
                items: {type: string}
              labels:
                type: object
                additionalProperties: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              parts:
                type: array
                items:
                  type: object
                  properties:
                    id: {type: string, description: The part's id.}
                  x-kubernetes-validations:
                  - {rule: "has(self.id)", messageExpression: "'no id'"}
          status:
            type: object
            properties:
              phase: {type: string}
`

func TestReference(t *testing.T) {
	x, err := ParseXRD([]byte(xrd))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Reference([]XRD{x})
	if err != nil {
		t.Fatal(err)
	}
	want := referenceIntro + "- [Widget](#widget)\n\n" + "## Widget\n\n" +
		"Claim `Widget` (`widgets`, `w`), namespaced; composite `XWidget` (`xwidgets`, `xw`), cluster-scoped. API version `example.org/v1`.\n\n" +
		"A widget for \\<things\\>.\n\n" +
		"`kubectl get` columns: SIZE (`.spec.size`).\n\n" +
		"Rules on the whole object:\n\n" +
		"- `size(self.metadata.name) <= 9`: name too long\n\n" +
		"### Widget `spec`\n\n" +
		"- **`spec`** (object): required\n" +
		"- **`spec.extra`** (object, any fields)\n" +
		"- **`spec.labels`** (map of string to string)\n" +
		"- **`spec.mode`** (string): one of `\"fast\"`, `\"slow\"`\n" +
		"- **`spec.name`** (string): at least 1 character; at most 8 characters; pattern `^[a-z]+$`; immutable\n" +
		"  - Rule: `self == oldSelf`: name is immutable\n" +
		"- **`spec.parts`** (array of object)\n" +
		"- **`spec.parts[]`** (object)\n" +
		"  - Rule: `has(self.id)`: message `'no id'`\n" +
		"- **`spec.parts[].id`** (string)\n" +
		"  The part's id.\n" +
		"- **`spec.port`** (integer or string)\n" +
		"- **`spec.size`** (integer, int32): required; default `3`; minimum 1; exclusive maximum 10\n" +
		"  Size in \\*units\\*.\n" +
		"  Second line with `a_b`.\n" +
		"- **`spec.tags`** (array of string): at most 4 items; a list of type set\n" +
		"\n" +
		"### Widget `status`\n\n" +
		"- **`status`** (object)\n" +
		"- **`status.phase`** (string)\n" +
		"\n"
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(string(got), "\n")); diff != "" {
		t.Errorf("Reference (-want +got):\n%s", diff)
	}
}

// TestReferenceListsWhatIsAddedToAKubernetesType renders an engine whose
// pod template's spec is a Kubernetes type: its fields are not listed,
// the bounds and rules this product adds under it are.
func TestReferenceListsWhatIsAddedToAKubernetesType(t *testing.T) {
	src := strings.NewReplacer("XWidget", "XFireboltEngine", "xwidgets", "xfireboltengines").Replace(xrd)
	src = strings.Replace(src, "          status:\n", `              template:
                type: object
                properties:
                  spec:
                    type: object
                    description: The pod's spec.
                    properties:
                      hostname: {type: string, description: A Kubernetes field.}
                      containers:
                        type: array
                        maxItems: 64
                        x-kubernetes-validations:
                        - {rule: "self.all(c, c.name != 'x')", message: name x is reserved}
                        items:
                          type: object
                          properties:
                            name: {type: string, maxLength: 63}
          status:
`, 1)
	x, err := ParseXRD([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Reference([]XRD{x})
	if err != nil {
		t.Fatal(err)
	}
	want := "- **`spec.template.spec`** (object)\n" +
		"  The pod's spec.\n" +
		"  - Its fields are Kubernetes' [PodSpec](" + podSpec.URL + "). This product adds:\n" +
		"    - **`spec.template.spec.containers`**: at most 64 items\n" +
		"      - Rule: `self.all(c, c.name != 'x')`: name x is reserved\n" +
		"    - **`spec.template.spec.containers[].name`**: at most 63 characters\n" +
		"\n### Widget `status`"
	if !strings.Contains(string(got), want) {
		t.Errorf("Reference has no\n%s\nin\n%s", want, got)
	}
	if strings.Contains(string(got), "hostname") {
		t.Error("Reference lists a field of the Kubernetes type")
	}

	// A Kubernetes type the schema lacks is an error, not a silent miss.
	noTemplate := strings.NewReplacer("XWidget", "XFireboltEngine", "xwidgets", "xfireboltengines").Replace(xrd)
	x, err = ParseXRD([]byte(noTemplate))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Reference([]XRD{x}); err == nil || !strings.Contains(err.Error(), "spec.template.spec") {
		t.Errorf("Reference of an engine without spec.template.spec: got error %v, want one naming it", err)
	}
}

func TestTroubleshooting(t *testing.T) {
	conds := []reasons.Condition{
		{Type: "Alpha", Kinds: []string{"KindA", "KindB"}, About: "what alpha says"},
		{Type: "Beta", Kinds: []string{"KindB"}, About: "what beta | says"},
	}
	entries := []reasons.Entry{
		{Type: "Alpha", Reason: "Fine", Status: "True", Meaning: "all good", Action: "nothing"},
		{Type: "Beta", Reason: "Broken", Status: "False/Unknown", Meaning: "a | b", Action: "fix `x`"},
	}
	got := string(troubleshooting("# Intro\n\ntext\n\n\n", conds, entries))
	want := "# Intro\n\ntext\n\n" +
		"## Conditions by kind\n\n| kind | conditions |\n|---|---|\n" +
		"| `KindA` | [Alpha](#alpha) |\n" +
		"| `KindB` | [Alpha](#alpha), [Beta](#beta) |\n" +
		"\n## Alpha\n\nOn `KindA` and `KindB`: what alpha says\n\n" +
		"| reason | status | what it means | what to do |\n|---|---|---|---|\n" +
		"| `Fine` | True | all good | nothing |\n" +
		"\n## Beta\n\nOn `KindB`: what beta \\| says\n\n" +
		"| reason | status | what it means | what to do |\n|---|---|---|---|\n" +
		"| `Broken` | False/Unknown | a \\| b | fix `x` |\n"
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("troubleshooting (-want +got):\n%s", diff)
	}
}

func TestEscape(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"plain":             {"a plain sentence.", "a plain sentence."},
		"markup":            {"*a* _b_ <c> [d] # e | f \\ g", `\*a\* \_b\_ \<c\> \[d\] \# e \| f \\ g`},
		"code kept":         {"set `a_b*` to <x>", "set `a_b*` to \\<x\\>"},
		"unpaired backtick": {"a ` b_c", "a ` b\\_c"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := escape(tc.in); got != tc.want {
				t.Errorf("escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
