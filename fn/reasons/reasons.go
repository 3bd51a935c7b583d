// Package reasons is the catalogue of every condition reason the function
// sets on a claim, with what it means and what to do about it. It is pure
// data, imported by the kubectl plugin (`engine status`) and the docs
// generator (docs/troubleshooting.md); its test fails when the code can set
// a reason the catalogue lacks, or the catalogue lists one the code no
// longer sets.
package reasons

import (
	"cmp"
	"slices"
)

// Entry is one reason of one condition type.
type Entry struct {
	// Type is the condition type, e.g. EngineReady.
	Type string
	// Reason is the condition's reason.
	Reason string
	// Status is the condition status the reason comes with: True, False
	// or Unknown, or two of them joined by "/" when the code sets either.
	Status string
	// Meaning says what the reason means.
	Meaning string
	// Action says what to do: which object and field to look at, which
	// command to run. "Nothing" for a healthy or transient state.
	Action string
}

// Condition describes one condition type.
type Condition struct {
	// Type is the condition type.
	Type string
	// Kinds are the claim kinds that carry it.
	Kinds []string
	// About says what the condition tells.
	About string
}

// catalogue is every entry, flattened from groups once.
var catalogue = func() []Entry {
	var out []Entry
	for _, g := range groups {
		for _, r := range g.reasons {
			out = append(out, Entry{Type: g.Type, Reason: r.name, Status: r.status, Meaning: r.meaning, Action: r.action})
		}
	}
	return out
}()

// All is every entry, ordered by type, then reason.
func All() []Entry {
	out := slices.Clone(catalogue)
	slices.SortFunc(out, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// Lookup is the entry of reason on condition type condType.
func Lookup(condType, reason string) (Entry, bool) {
	for _, e := range catalogue {
		if e.Type == condType && e.Reason == reason {
			return e, true
		}
	}
	return Entry{}, false
}

// Conditions is every condition type, ordered by type.
func Conditions() []Condition {
	out := make([]Condition, len(groups))
	for i, g := range groups {
		c := g.Condition
		c.Kinds = slices.Clone(c.Kinds)
		out[i] = c
	}
	slices.SortFunc(out, func(a, b Condition) int { return cmp.Compare(a.Type, b.Type) })
	return out
}
