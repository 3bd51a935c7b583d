package engine

import "fmt"

// ReasonUISidecarImageNotSet holds an engine that asks for the web UI
// sidecar while the function input names no image for it.
const ReasonUISidecarImageNotSet = "UISidecarImageNotSet"

// uiSidecarRejection holds a new generation that would run the opt-in web UI
// sidecar without an image. The original's default floats (latest), and
// every default image here is pinned, so the platform operator who owns the
// Composition chooses the sidecar's image; rendering an empty image would
// only fail at the API server.
func uiSidecarRejection(in Inputs) *rejection {
	class := in.classSpec()
	if in.Config.Images.EngineUI != "" || !effectiveUISidecar(in.Spec, class) {
		return nil
	}
	from := "spec.uiSidecar"
	if in.Spec.UISidecar == nil {
		from = fmt.Sprintf("spec.uiSidecar of FireboltEngineClass %s", in.Class.Name)
	}
	return &rejection{Reason: ReasonUISidecarImageNotSet, Message: fmt.Sprintf(
		"%s asks for the engine web UI sidecar, which has no default image: the platform sets a pinned one in spec.images.engineUI of the function-firebolt input in the Composition; until then set uiSidecar to false",
		from)}
}
