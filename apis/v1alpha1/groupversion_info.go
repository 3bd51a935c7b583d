// Package v1alpha1 holds the compute.firebolt.io/v1alpha1 API: the spec and
// status of FireboltEngine, FireboltEngineClass and FireboltInstance, with
// the original operator's field names, defaults and validation.
//
// The root types are the composite kinds (XFireboltEngine, …) because
// Crossplane serves the claims from the same schema; hack/xrdgen wraps the
// CRDs that controller-gen derives from these types into
// CompositeResourceDefinitions that offer the claim kinds without the X.
//
// +kubebuilder:object:generate=true
// +groupName=compute.firebolt.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and version of this API.
const (
	Group   = "compute.firebolt.io"
	Version = "v1alpha1"
)

// SchemeGroupVersion is the group version of this API.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// AppsGroup is the group of PhasedStatefulSet (package apis/apps/v1alpha1,
// which imports this one for the check block).
const AppsGroup = "apps.firebolt.io"

// StsPlusGroup is the group of PhasedRollout (package
// apis/stsplus/v1alpha1): the seed 004 operator's own group, so that its
// manifests apply unchanged.
const StsPlusGroup = "sts.plus"

// Composite kinds, as Crossplane serves them and hands them to the function.
const (
	XPhasedStatefulSetKind = "XPhasedStatefulSet"
	PhasedStatefulSetKind  = "PhasedStatefulSet"
	XPhasedRolloutKind     = "XPhasedRollout"
	PhasedRolloutKind      = "PhasedRollout"

	XFireboltEngineKind      = "XFireboltEngine"
	XFireboltEngineClassKind = "XFireboltEngineClass"
	XFireboltInstanceKind    = "XFireboltInstance"
)

// Claim kinds: the kinds a user applies, named as the original operator's.
const (
	FireboltEngineKind      = "FireboltEngine"
	FireboltEngineClassKind = "FireboltEngineClass"
	FireboltInstanceKind    = "FireboltInstance"
)

// CompositeKind is one composite kind with every name it goes by.
// +kubebuilder:object:generate=false
type CompositeKind struct {
	// Group is the API group of both kinds.
	Group string
	// Kind is the composite kind, Claim the claim kind users apply.
	Kind, Claim string
	// Plural is the composite's resource name; its XRD is
	// apis/definitions/<Plural>.yaml.
	Plural string
	// Composition is the file under composition/ holding the Composition
	// that composes it (the XRD's defaultCompositionRef).
	Composition string
}

// XRD is the path of the kind's XRD relative to the repository root.
func (k CompositeKind) XRD() string { return "apis/definitions/" + k.Plural + ".yaml" }

// Composites is the table of composite kinds: the function dispatches on
// it, hack/pkgstage generates a Composition for each, and the render
// tooling finds each example's Composition and XRD in it.
var Composites = []CompositeKind{
	{Group: Group, Kind: XFireboltInstanceKind, Claim: FireboltInstanceKind, Plural: "xfireboltinstances", Composition: "instance.yaml"},
	{Group: Group, Kind: XFireboltEngineKind, Claim: FireboltEngineKind, Plural: "xfireboltengines", Composition: "engine.yaml"},
	{Group: Group, Kind: XFireboltEngineClassKind, Claim: FireboltEngineClassKind, Plural: "xfireboltengineclasses", Composition: "engineclass.yaml"},
	{Group: AppsGroup, Kind: XPhasedStatefulSetKind, Claim: PhasedStatefulSetKind, Plural: "xphasedstatefulsets", Composition: "phasedstatefulset.yaml"},
	{Group: StsPlusGroup, Kind: XPhasedRolloutKind, Claim: PhasedRolloutKind, Plural: "xphasedrollouts", Composition: "phasedrollout.yaml"},
}

// CompositeKindOf finds kind in Composites.
func CompositeKindOf(kind string) (CompositeKind, bool) {
	for _, k := range Composites {
		if k.Kind == kind {
			return k, true
		}
	}
	return CompositeKind{}, false
}

var (
	// SchemeBuilder registers this API's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this API's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion,
		&XFireboltEngine{}, &XFireboltEngineList{},
		&XFireboltEngineClass{}, &XFireboltEngineClassList{},
		&XFireboltInstance{}, &XFireboltInstanceList{},
	)
	return nil
}
