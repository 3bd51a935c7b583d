// Package claimgen decides the status.observedGeneration a composite
// publishes, which Crossplane copies verbatim onto its claim.
//
// Crossplane v2.4's claim syncer copies every composite status field except
// conditions, connectionDetails and claimConditionTypes onto the claim
// (claim/syncer_ssa.go), and nothing in Crossplane writes a composite's or a
// claim's status.observedGeneration. So the value the function writes on the
// composite is the value kstatus (Flux, kubectl wait) and Argo CD compare
// with the claim's own metadata.generation. The composite's generation is no
// use there: it moves whenever Crossplane writes references into the
// composite's spec, and it never equals the claim's.
//
// The function therefore reads its own claim as a required resource and
// publishes the claim's generation exactly when the spec of that generation
// is fully in effect, a lower number while it is not, and never a higher
// one: a claim generation is only published together with the spec it was
// read with, after the composer has checked that this spec is the
// composite's and is in effect.
package claimgen

import (
	"encoding/json"
	"reflect"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Requirement is the name under which a composer asks Crossplane for its
// own claim.
const Requirement = "claim"

// Claim is what a composer knows of its own claim.
type Claim struct {
	// Resolved is false until Crossplane has tried to fetch the claim.
	Resolved bool
	// Found is true when the claim exists.
	Found bool
	// Generation is the claim's metadata.generation.
	Generation int64
	// SpecMatches is true when the claim's spec, as the composite's API
	// type decodes it, is the composite's: the claim's generation is the
	// one the composite's spec was synced from.
	SpecMatches bool
}

// Selector asks Crossplane for the claim by name in its namespace.
func Selector(apiVersion, kind, name, namespace string) *fnv1.ResourceSelector {
	return composite.Select(apiVersion, kind, namespace, name)
}

// Read finds the claim named name among the required resources and
// compares its spec with the composite's, both decoded into the API type T
// so that Crossplane's own spec fields (resourceRef on the claim,
// resourceRefs and claimRef on the composite) do not count. The claim's
// name and generation are read where they are in the request's Struct and
// only its spec is converted: every call reads the claim, and its status
// and managed fields are most of it.
func Read[T any](req *fnv1.RunFunctionRequest, name string, compositeSpec T) (Claim, error) {
	rrs, resolved := req.GetRequiredResources()[Requirement]
	c := Claim{Resolved: resolved}
	for _, it := range rrs.GetItems() {
		obj := it.GetResource().GetFields()
		md := obj["metadata"].GetStructValue().GetFields()
		// As unstructured's getters read them: a name that is not a
		// string is "", a generation that is not a number 0.
		if md["name"].GetStringValue() != name {
			continue
		}
		c.Found = true
		c.Generation = int64(md["generation"].GetNumberValue())
		var spec T
		// A claim spec the API type cannot decode is not the composite's.
		c.SpecMatches = composite.DecodeStructValue(obj["spec"], &spec) == nil && sameJSON(spec, compositeSpec)
		break
	}
	return c, nil
}

// Observed is the status.observedGeneration to publish, given the one
// published so far (prev) and whether the composite's spec is fully in
// effect on this call.
//
//   - Claim not fetched yet: keep prev; Crossplane calls again with it.
//   - Claim gone: 0; there is no generation to vouch for.
//   - Claim's spec is the composite's and in effect: the claim's generation.
//   - Otherwise: below the claim's generation, and never above prev.
func Observed(prev int64, c Claim, inEffect bool) int64 {
	switch {
	case !c.Resolved:
		return prev
	case !c.Found:
		return 0
	case inEffect && c.SpecMatches:
		return c.Generation
	}
	return max(0, min(prev, c.Generation-1))
}

// sameJSON compares two values as they encode: the API types' JSON is
// canonical (struct fields in order, map keys sorted).
func sameJSON(a, b any) bool {
	// Deeply equal values encode alike; only values that are not (a
	// quantity spelled two ways) need encoding. The common case, a claim in
	// sync with its composite, costs no encoding.
	if reflect.DeepEqual(a, b) {
		return true
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && reflect.DeepEqual(ja, jb)
}
