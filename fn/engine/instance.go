package engine

import (
	"fmt"
	"strings"
)

// instanceState is what the engine needs from its FireboltInstance.
type instanceState struct {
	Ready bool
	// Waiting is true while Crossplane has not fetched the instance yet:
	// not a failure, the next call carries it.
	Waiting bool
	// Message says why the instance is not ready, or that it is.
	Message string
	// ID and MetadataEndpoint go into config.yaml when Ready.
	ID               string
	MetadataEndpoint string
}

// evaluateInstance applies the original's gate: an instance is usable when
// it exists, its metadata service is ready, it publishes a metadata
// endpoint, and it has an id (the one in use, status.id, else spec.id). metadataEndpointOverride replaces the endpoint
// in the rendered config; it does not lift the gate.
func evaluateInstance(in Inputs) instanceState {
	ref := fmt.Sprintf("FireboltInstance %s/%s", in.Namespace, in.Instance.Name)
	switch {
	case !in.Instance.Resolved:
		return instanceState{Waiting: true, Message: "waiting for Crossplane to fetch " + ref}
	case !in.Instance.Found:
		return instanceState{Message: ref + " not found"}
	case in.Instance.Err != "":
		return instanceState{Message: ref + ": " + in.Instance.Err}
	}
	st := in.Instance.Status
	// status.id is the account the metadata service serves; the instance
	// never switches it to a later spec.id, so neither may its engines.
	id := st.ID
	if id == "" {
		id = in.Instance.Spec.ID
	}
	var missing []string
	if !st.MetadataReady {
		missing = append(missing, "its metadata service is not ready (status.metadataReady is false)")
	}
	if st.MetadataEndpoint == "" {
		missing = append(missing, "it publishes no metadata endpoint (status.metadataEndpoint is empty)")
	}
	if id == "" {
		missing = append(missing, "it has no id (spec.id and status.id are empty)")
	}
	if len(missing) > 0 {
		return instanceState{Message: ref + " is not ready: " + strings.Join(missing, "; ")}
	}
	endpoint := st.MetadataEndpoint
	if o := in.Spec.MetadataEndpointOverride; o != nil && *o != "" {
		endpoint = *o
	}
	return instanceState{Ready: true, Message: ref + " is ready", ID: id, MetadataEndpoint: endpoint}
}
