package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/firebolt-db/firebolt-crossplane/fn/reasons"
	"github.com/firebolt-db/firebolt-crossplane/internal/markdown"

	_ "embed"
)

//go:embed troubleshooting_intro.md
var troubleshootingIntro string

// Troubleshooting renders the troubleshooting page: the intro, then every
// condition type with every reason the function sets.
func Troubleshooting() []byte {
	return troubleshooting(troubleshootingIntro, reasons.Conditions(), reasons.All())
}

func troubleshooting(intro string, conds []reasons.Condition, entries []reasons.Entry) []byte {
	var b bytes.Buffer
	b.WriteString(strings.TrimRight(intro, "\n") + "\n\n")
	b.WriteString("## Conditions by kind\n\n| kind | conditions |\n|---|---|\n")
	byKind := map[string][]string{}
	var kinds []string
	for _, c := range conds {
		for _, k := range c.Kinds {
			if byKind[k] == nil {
				kinds = append(kinds, k)
			}
			byKind[k] = append(byKind[k], fmt.Sprintf("[%s](#%s)", c.Type, markdown.Anchor(c.Type)))
		}
	}
	for _, k := range kinds {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k, strings.Join(byKind[k], ", "))
	}
	for _, c := range conds {
		fmt.Fprintf(&b, "\n## %s\n\n", c.Type)
		fmt.Fprintf(&b, "On %s: %s\n\n", quoteAll(c.Kinds), cell(c.About))
		b.WriteString("| reason | status | what it means | what to do |\n|---|---|---|---|\n")
		for _, e := range entries {
			if e.Type == c.Type {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", e.Reason, e.Status, cell(e.Meaning), cell(e.Action))
			}
		}
	}
	return b.Bytes()
}

func quoteAll(kinds []string) string {
	q := make([]string, len(kinds))
	for i, k := range kinds {
		q[i] = "`" + k + "`"
	}
	return strings.Join(q, " and ")
}

// cell keeps text inside one table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
