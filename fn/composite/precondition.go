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
// statusPrecondition breaks that chain. When the conditions a call was
// given are not the ones its reconcile will end with (the only case in
// which the apply writes older ones), the desired composite carries the
// resourceVersion it was given, which makes the apply conditional: from a
// copy older than the stored composite it fails with a conflict, which
// Crossplane requeues without an event or a status write (reconciler.go
// L764), and the retry reads its caught-up cache. Otherwise it carries
// none, so that writes of others (the claim syncer, a user's annotation)
// cost no retry, a call whose conditions hold loses nothing to a conflict
// (its status, its events: a phased step's event is emitted once), and the
// conditions go unconditioned only where they cannot go back. Nor when the
// call changes which resources are composed: Crossplane applies the
// composite's resourceRefs first in the same reconcile, which would fail
// the apply every time.

// statusPrecondition is the resourceVersion the desired composite carries:
// the observed one when the observed conditions are behind the call's and
// the composed resources stay the same; "" otherwise.
func statusPrecondition[S any](req *fnv1.RunFunctionRequest, r Response[S]) string {
	xr := req.GetObserved().GetComposite().GetResource()
	md := xr.GetFields()["metadata"].GetStructValue()
	rv := md.GetFields()["resourceVersion"].GetStringValue()
	if rv == "" || !conditionsBehind(xr, r) || !sameComposed(req, r) {
		return ""
	}
	return rv
}

// observedCondition is what the precondition compares of a condition.
type observedCondition struct {
	status, reason, message string
	observedGeneration      float64
}

// conditionsBehind reports whether the composite xr's conditions differ
// from those its reconcile ends with: the call's own, Ready following the
// call's readiness, and Ready and Synced at the composite's generation.
func conditionsBehind[S any](xr *structpb.Struct, r Response[S]) bool {
	obs := map[string]observedCondition{}
	for _, v := range xr.GetFields()["status"].GetStructValue().GetFields()["conditions"].GetListValue().GetValues() {
		f := v.GetStructValue().GetFields()
		t := f["type"].GetStringValue()
		if _, seen := obs[t]; seen {
			continue
		}
		obs[t] = observedCondition{
			status: f["status"].GetStringValue(), reason: f["reason"].GetStringValue(), message: f["message"].GetStringValue(),
			observedGeneration: f["observedGeneration"].GetNumberValue(),
		}
	}
	for _, c := range r.Conditions {
		o, ok := obs[c.Type]
		if !ok || o.status != string(c.Status) || o.reason != c.Reason || o.message != BoundMessage(c.Message) {
			return true
		}
	}
	if (obs["Ready"].status == "True") != r.Ready {
		return true
	}
	gen := xr.GetFields()["metadata"].GetStructValue().GetFields()["generation"].GetNumberValue()
	for _, t := range []string{"Ready", "Synced"} {
		if o, ok := obs[t]; ok && o.observedGeneration != gen {
			return true
		}
	}
	return false
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
