// Package v1alpha1 holds the sts.plus/v1alpha1 API: PhasedRollout, seed
// 004's phased rollout of a StatefulSet someone else owns (a Helm chart,
// another operator), in the seed operator's own group and field names so
// its manifests apply unchanged. The same function composes it as the
// engines; the StatefulSet itself is never composed.
//
// +kubebuilder:object:generate=true
// +groupName=sts.plus
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	compute "github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Group and version of this API.
const (
	Group   = compute.StsPlusGroup
	Version = "v1alpha1"
)

// SchemeGroupVersion is the group version of this API.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

var (
	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &XPhasedRollout{}, &XPhasedRolloutList{})
	return nil
}
