// Package v1alpha1 holds the apps.firebolt.io/v1alpha1 API: PhasedStatefulSet,
// any StatefulSet rolled out one pod at a time behind Prometheus checks, as
// seed 004 describes, composed by the same function as the engines.
//
// +kubebuilder:object:generate=true
// +groupName=apps.firebolt.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	compute "github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// Group and version of this API.
const (
	Group   = compute.AppsGroup
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
	s.AddKnownTypes(SchemeGroupVersion, &XPhasedStatefulSet{}, &XPhasedStatefulSetList{})
	return nil
}
