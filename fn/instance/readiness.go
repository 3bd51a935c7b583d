package instance

import (
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// Crossplane does not read a composed resource's status: a resource is
// ready only when the function says so. These read the observed workload
// status the way its controller writes it.

// integer reads an integer field, zero when absent. Observed objects come
// from a protobuf Struct, whose numbers are float64: the typed accessors
// such as GetGeneration read those as zero, so every number goes through
// here.
func integer(u *composed.Unstructured, path string) int64 {
	v, err := u.GetInteger(path)
	if err != nil {
		return 0
	}
	return v
}

// specReplicas is spec.replicas, which defaults to 1.
func specReplicas(u *composed.Unstructured) int64 {
	if _, err := u.GetValue("spec.replicas"); err != nil {
		return 1
	}
	return integer(u, "spec.replicas")
}

// serving reports whether a Deployment has a pod that passed its readiness
// probe, which is when its Service has somewhere to send traffic. It does
// not wait for a rollout: a gateway rolls with maxUnavailable 0 and keeps
// serving throughout, and flapping the endpoint on every edit would stall
// engines for nothing.
func serving(d *composed.Unstructured) bool {
	return d != nil && integer(d, "status.availableReplicas") > 0
}

// deploymentRolledOut reports whether the Deployment controller has acted
// on the current spec and every replica of it is available.
func deploymentRolledOut(d *composed.Unstructured) bool {
	want := specReplicas(d)
	return integer(d, "status.observedGeneration") >= integer(d, "metadata.generation") &&
		integer(d, "status.updatedReplicas") >= want &&
		integer(d, "status.availableReplicas") >= want
}

// statefulSetReady reports whether the StatefulSet controller has acted on
// the current spec and every replica is ready.
func statefulSetReady(s *composed.Unstructured) bool {
	return s != nil &&
		integer(s, "status.observedGeneration") >= integer(s, "metadata.generation") &&
		integer(s, "status.readyReplicas") >= specReplicas(s)
}

// resourceReady is the readiness the composer reports for a composed
// resource: workloads by their status, everything else as soon as it
// exists.
func resourceReady(observed *composed.Unstructured) bool {
	if observed == nil {
		return false
	}
	switch observed.GetKind() {
	case "Deployment":
		return deploymentRolledOut(observed)
	case "StatefulSet":
		return statefulSetReady(observed)
	case "Certificate":
		return certificateReady(observed)
	default:
		return true
	}
}
