package phased

import "sort"

// TableCase is one row of the step table (stepCases), for the external
// tests that replay it through each composer: one step logic, whichever
// form runs it.
type TableCase struct {
	Name, Reason string
	In           Input
	Want         Decision
	// NextNeeds: calling again with the returned status asks for I/O.
	NextNeeds bool
}

// StepTable is the step table, in name order.
func StepTable() []TableCase {
	cases := stepCases()
	out := make([]TableCase, 0, len(cases))
	for name, c := range cases {
		out = append(out, TableCase{Name: name, Reason: c.reason, In: c.in, Want: c.want, NextNeeds: c.nextNeeds})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
