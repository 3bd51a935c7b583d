package composite

import (
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
)

// Crossplane v2.4 writes a composite's status twice per reconcile: the
// server-side apply of the desired status, which carries the conditions as
// the reconcile read them (composition_functions.go L732-L755), then an
// update with the conditions the call reported and Crossplane's Ready and
// Synced (reconciler.go L930). The apply's watch event queues the next
// reconcile, which usually reads its cache before the update's event has
// reached it: it applied the older conditions back, and so could the one
// after, the composite, and its claim, reading not Ready again each time
// (measured on an idle control plane: up to two such writes after a
// rollout; under load a chain that carried 40 s old conditions).
//
// statusPrecondition breaks that chain. When the readiness a call was
// given is not the one its reconcile will end with (Ready other than the
// call's readiness, or Ready or Synced at an older generation), the desired
// composite carries the resourceVersion it was given, which makes the
// apply conditional: from a copy older than the stored composite it fails
// with a conflict, which Crossplane requeues without an event or a status
// write (reconciler.go L764), and the retry reads its caught-up cache.
// Otherwise it carries none. A conflict loses the call's status and events
// (its composed resources are applied before), so it is kept to where an
// older copy would make the composite read not Ready, or its conditions at
// a generation it has left: a condition whose message moves with every
// call (a phased rollout's step) would otherwise lose a step's event to
// every stale read, and writes of others (the claim syncer, a user's
// annotation) to any call. Nor when the call changes which resources are
// composed: Crossplane applies the composite's resourceRefs first in the
// same reconcile, which would fail the apply every time.

// statusPrecondition is the resourceVersion the desired composite carries:
// the observed one when the observed readiness is behind the call's and the
// composed resources stay the same; "" otherwise.
func statusPrecondition[S any](req *fnv1.RunFunctionRequest, r Response[S]) string {
	xr := req.GetObserved().GetComposite().GetResource()
	md := xr.GetFields()["metadata"].GetStructValue()
	rv := md.GetFields()["resourceVersion"].GetStringValue()
	if rv == "" || !readinessBehind(xr, r.Ready) || !sameComposed(req, r) {
		return ""
	}
	return rv
}

// readinessBehind reports whether the composite xr's Ready and Synced
// differ from those its reconcile ends with: Ready following ready, and
// both at the composite's generation.
func readinessBehind(xr *structpb.Struct, ready bool) bool {
	gen := xr.GetFields()["metadata"].GetStructValue().GetFields()["generation"].GetNumberValue()
	seen := map[string]bool{}
	for _, v := range xr.GetFields()["status"].GetStructValue().GetFields()["conditions"].GetListValue().GetValues() {
		f := v.GetStructValue().GetFields()
		t := f["type"].GetStringValue()
		if (t != "Ready" && t != "Synced") || seen[t] {
			continue
		}
		seen[t] = true
		if f["observedGeneration"].GetNumberValue() != gen {
			return true
		}
		if t == "Ready" && (f["status"].GetStringValue() == "True") != ready {
			return true
		}
	}
	return !seen["Ready"] && ready
}

// sameComposed reports whether the call composes exactly the resources it
// observed, by name: Crossplane then leaves the composite's resourceRefs
// as they are.
func sameComposed[S any](req *fnv1.RunFunctionRequest, r Response[S]) bool {
	observed := req.GetObserved().GetResources()
	desired := len(r.Resources)
	for name := range req.GetDesired().GetResources() {
		if _, ours := r.Resources[resource.Name(name)]; !ours {
			desired++
		}
	}
	if desired != len(observed) {
		return false
	}
	for name := range observed {
		_, ours := r.Resources[resource.Name(name)]
		_, earlier := req.GetDesired().GetResources()[name]
		if !ours && !earlier {
			return false
		}
	}
	return true
}
