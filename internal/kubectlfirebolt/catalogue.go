package kubectlfirebolt

// catalogueEntry is what the troubleshooting catalogue says of a condition
// reason: what it means and what to do next.
type catalogueEntry struct {
	Meaning, Action string
}

// lookupReason finds a condition's reason in the catalogue.
func lookupReason(typ, reason string) (catalogueEntry, bool) {
	_, _ = typ, reason
	return catalogueEntry{}, false
}
