package v1alpha1

import "fmt"

// Limits that the API server enforces at admission and the function
// enforces again, because a composite can be created without its claim. The
// "Limits" section of docs/scale-and-performance.md gives the measurements
// they rest on.

// MaxEngineReplicas is the largest spec.replicas an engine may ask for.
// Every node is listed in the generation's ConfigMap, and a rollout returns
// two generations' ConfigMaps in one gRPC response and records both in the
// composite's status; fn/engine's TestReplicaLimitFits renders this many
// with the longest names and checks every one of those limits with
// headroom. The schema's maximum on spec.replicas and autoStop's replica
// counts must say the same (apis' TestEngineClaims checks that they do).
const MaxEngineReplicas = 1000

// MaxGeneration is the largest blue-green generation number. Numbers run
// 0..MaxGeneration and then wrap to 0, skipping any number still in use, so
// a generation's number never has more than three digits and the longest
// name an engine composes is known in advance.
const MaxGeneration = 999

// Name limits. Composed objects are named after the claim (the composite
// is named <claim>-<5 random characters> by Crossplane and that name is not
// used), so the claim's metadata.name is what is limited.
const (
	// MaxEngineNameLength: the StatefulSet <engine>-g<generation> must fit
	// in 52 characters, so that its pods' controller-revision-hash label
	// (<statefulset>-<10-character hash>) fits in a label value's 63. With
	// three-digit generations that leaves 52-2-3 = 47; the other names
	// (<engine>-service, <engine>-g<generation>-hl, the pods
	// <engine>-g<generation>-<ordinal>) are shorter or less strict.
	MaxEngineNameLength = 47

	// MaxInstanceNameLength: the internal PostgreSQL StatefulSet
	// <instance>-metadata-pg must fit in 52 characters (52-12 = 40); the
	// Services <instance>-metadata and <instance>-gateway, and every other
	// object, have more room.
	MaxInstanceNameLength = 40

	// MaxPhasedStatefulSetNameLength: the StatefulSet is named after the
	// PhasedStatefulSet claim, and its pods' controller-revision-hash label
	// (<statefulset>-<10-character hash>) must fit in a label value's 63.
	MaxPhasedStatefulSetNameLength = 52
)

// ClaimNameLimits is the longest claim name of each composite kind whose
// claim names composed objects. hack/xrdgen compiles each into a CEL rule on
// the claim's metadata.name.
var ClaimNameLimits = map[string]ClaimNameLimit{
	XFireboltEngineKind: {
		Claim:     FireboltEngineKind,
		MaxLength: MaxEngineNameLength,
		Why:       "its StatefulSets <name>-g<generation> (generations 0-999) must fit in 52 characters",
	},
	XPhasedStatefulSetKind: {
		Claim:     PhasedStatefulSetKind,
		MaxLength: MaxPhasedStatefulSetNameLength,
		Why:       "its StatefulSet is named after it and must fit in 52 characters",
		Names:     "a StatefulSet whose pods' names are host names",
	},
	XFireboltInstanceKind: {
		Claim:     FireboltInstanceKind,
		MaxLength: MaxInstanceNameLength,
		Why:       "its PostgreSQL StatefulSet <name>-metadata-pg must fit in 52 characters",
	},
}

// ClaimNameLimit limits the names of one claim kind.
// +kubebuilder:object:generate=false
type ClaimNameLimit struct {
	// Claim is the claim kind.
	Claim string
	// MaxLength is the longest name accepted.
	MaxLength int
	// Why says which composed name sets the limit.
	Why string
	// Names says what the name names that must be a DNS-1035 label;
	// "Services" when empty.
	Names string
}

// NamesWhat is what the claim's name names, for the DNS-1035 label rule.
func (l ClaimNameLimit) NamesWhat() string {
	if l.Names == "" {
		return "Services"
	}
	return l.Names
}

// Message says that a name is too long and why, as admission and the
// function say it.
func (l ClaimNameLimit) Message() string {
	return fmt.Sprintf("a %s name may be at most %d characters: %s", l.Claim, l.MaxLength, l.Why)
}
