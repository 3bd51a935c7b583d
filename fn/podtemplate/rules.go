package podtemplate

import "strings"

// ReservedKeyPrefix is the label and annotation key prefix the operator owns.
// The composers stamp keys under it (generation selectors, content hashes),
// so a user-set one would freeze rollouts or break routing.
const ReservedKeyPrefix = "firebolt.io/"

// Container names the operator renders.
const (
	EngineContainer    = "engine"
	EngineWebContainer = "engine-web"
	MetadataContainer  = "metadata"
	GatewayContainer   = "envoy"
	WakeAgentContainer = "wake-agent"
)

// Environment variables the operator sets on the engine container.
const (
	EnvPodIndex                    = "POD_INDEX"
	EnvAWSEC2MetadataClientEnabled = "FB_AWS_EC2_METADATA_CLIENT_ENABLED"
)

// Volume names the operator renders on the engine pod.
const (
	VolumeEngineConfig = "engine-config"
	VolumeData         = "data"
	VolumeRuntime      = "runtime"
	VolumeAuthAdmin    = "auth-admin"
	VolumeEngineTLS    = "tls-engine"
	VolumeEngineWeb    = "nginx-writable-dir"

	// VolumeAuthSigningPrefix starts one volume per rendered signing key
	// ("auth-signing-<kid>"); the set grows and shrinks with key rotation,
	// so it is reserved by prefix.
	VolumeAuthSigningPrefix = "auth-signing-"
)

// Volume names the operator renders on the gateway pod.
const (
	VolumeGatewayConfig  = "config-volume"
	VolumeGatewayTmp     = "tmp"
	VolumeEngineCA       = "engine-ca"
	VolumeGatewayTLS     = "tls-gateway"
	VolumeClientCA       = "client-ca"
	VolumeEngineCRL      = "engine-crl"
	VolumeClientCRL      = "client-crl"
	VolumeWakeAgentToken = "wake-agent-token"
)

// Volume names the operator renders on the metadata pod.
const (
	VolumeMetadataConfig = "config"
	VolumePostgresCreds  = "postgres-creds"
	VolumeMetadataTmp    = "tmp"
)

// PrimaryFields says which fields of the primary container a user template
// may set. The zero value allows nothing: command, args, ports, probes,
// restartPolicy, restartPolicyRules, stdin, stdinOnce and tty are never
// allowed.
type PrimaryFields struct {
	Image              bool // image and imagePullPolicy
	Resources          bool
	Env                bool // entries named in Rules.ReservedEnv still rejected
	EnvFrom            bool
	VolumeMounts       bool // entries naming reserved volumes still rejected
	SecurityContext    bool
	Lifecycle          bool
	WorkingDir         bool
	TerminationMessage bool // terminationMessagePath and terminationMessagePolicy
	VolumeDevices      bool
	ResizePolicy       bool
}

// Rules describes one component's pod: its primary container, what a user
// may set on it, and the names the operator keeps for itself. The exported
// rule sets are shared; treat them as read-only.
type Rules struct {
	// Primary is the name of the operator-rendered main container.
	Primary string

	// Allow lists the primary-container fields a user may set.
	Allow PrimaryFields

	// ReservedEnv are env names the operator sets on the primary container.
	ReservedEnv []string

	// ReservedVolumes are the operator's pod volumes: a user template may
	// neither declare a volume by one of these names nor mount one into the
	// primary container (the operator mounts them itself).
	ReservedVolumes []string

	// ReservedVolumePrefixes reserve whole families of volume names the same
	// way.
	ReservedVolumePrefixes []string

	// SecretVolumes are the reserved volumes whose content comes from a
	// Secret (or a service-account token). User sidecars and init
	// containers may not mount them; the other reserved volumes (config,
	// data, scratch space) they may.
	SecretVolumes []string

	// SecretVolumePrefixes mark whole families as Secret-backed.
	SecretVolumePrefixes []string

	// ReservedContainers are other containers the operator may add to the
	// pod; a user container or init container may not take their names.
	ReservedContainers []string
}

// EngineRules govern FireboltEngine and FireboltEngineClass templates.
var EngineRules = Rules{
	Primary: EngineContainer,
	Allow: PrimaryFields{
		Image:              true,
		Resources:          true,
		Env:                true,
		EnvFrom:            true,
		VolumeMounts:       true,
		SecurityContext:    true,
		Lifecycle:          true,
		WorkingDir:         true,
		TerminationMessage: true,
		VolumeDevices:      true,
		ResizePolicy:       true,
	},
	ReservedEnv:            []string{EnvPodIndex, EnvAWSEC2MetadataClientEnabled},
	ReservedVolumes:        []string{VolumeEngineConfig, VolumeData, VolumeRuntime, VolumeAuthAdmin, VolumeEngineTLS, VolumeEngineWeb},
	ReservedVolumePrefixes: []string{VolumeAuthSigningPrefix},
	SecretVolumes:          []string{VolumeAuthAdmin, VolumeEngineTLS},
	SecretVolumePrefixes:   []string{VolumeAuthSigningPrefix},
	ReservedContainers:     []string{EngineWebContainer},
}

// MetadataRules govern FireboltInstance spec.metadata.template.
var MetadataRules = Rules{
	Primary:         MetadataContainer,
	Allow:           PrimaryFields{Image: true, Resources: true},
	ReservedVolumes: []string{VolumeMetadataConfig, VolumePostgresCreds, VolumeMetadataTmp},
	SecretVolumes:   []string{VolumePostgresCreds},
}

// GatewayRules govern FireboltInstance spec.gateway.template.
var GatewayRules = Rules{
	Primary: GatewayContainer,
	Allow:   PrimaryFields{Image: true, Resources: true},
	ReservedVolumes: []string{
		VolumeGatewayConfig, VolumeGatewayTmp, VolumeEngineCA, VolumeGatewayTLS,
		VolumeClientCA, VolumeEngineCRL, VolumeClientCRL, VolumeWakeAgentToken,
	},
	SecretVolumes: []string{
		VolumeEngineCA, VolumeGatewayTLS, VolumeClientCA, VolumeEngineCRL,
		VolumeClientCRL, VolumeWakeAgentToken,
	},
	ReservedContainers: []string{WakeAgentContainer},
}

// reservedVolume reports whether name is one of the operator's volumes.
func (r Rules) reservedVolume(name string) bool {
	return matches(name, r.ReservedVolumes, r.ReservedVolumePrefixes)
}

// secretVolume reports whether name is one of the operator's Secret-backed
// volumes.
func (r Rules) secretVolume(name string) bool {
	return matches(name, r.SecretVolumes, r.SecretVolumePrefixes)
}

func (r Rules) reservedEnv(name string) bool {
	return matches(name, r.ReservedEnv, nil)
}

func (r Rules) reservedContainer(name string) bool {
	return matches(name, r.ReservedContainers, nil)
}

func matches(name string, exact, prefixes []string) bool {
	for _, n := range exact {
		if name == n {
			return true
		}
	}
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
