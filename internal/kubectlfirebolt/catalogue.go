package kubectlfirebolt

import "github.com/firebolt-db/firebolt-crossplane/fn/reasons"

// Crossplane's own condition types on a claim, which the catalogue of the
// function's reasons does not cover.
const (
	typeReady  = "Ready"
	typeSynced = "Synced"
)

// syncedAdvice is what to do when Crossplane's Synced is not True: the
// function's conditions cannot say it, since the function did not run or
// its answer was not applied.
var syncedAdvice = reasons.Entry{
	Type:    typeSynced,
	Meaning: "Crossplane could not compose the claim: the function is unreachable, returned a fatal result, or an object could not be applied.",
	Action: "Read the message; check the function is healthy (`kubectl get functions`) and read the composite's events " +
		"(`kubectl describe` the composite named in the claim's spec.resourceRef).",
}

// lookupReason is what the troubleshooting catalogue (fn/reasons) says of
// a condition's reason. EngineReady also carries the reason of a stuck
// StatefulSet's Warning event (FailedCreate, …), which the catalogue
// documents as StatefulSetWarning. Crossplane's Ready is left out: it
// follows the function's own conditions, whose advice is given.
func lookupReason(typ, reason string) (reasons.Entry, bool) {
	if e, ok := reasons.Lookup(typ, reason); ok {
		return e, true
	}
	switch typ {
	case typeEngineReady:
		return reasons.Lookup(typ, "StatefulSetWarning")
	case typeSynced:
		return syncedAdvice, true
	}
	return reasons.Entry{}, false
}
