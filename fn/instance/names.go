package instance

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Composition resource names. Crossplane keeps the object name it first saw
// under a resource name, so these never change; every object the composer
// returns is keyed by one of them.
const (
	RNPostgresCredentials   resource.Name = "postgres-credentials"
	RNPostgres              resource.Name = "postgres"
	RNPostgresHeadless      resource.Name = "postgres-headless"
	RNMetadataConfig        resource.Name = "metadata-config"
	RNMetadata              resource.Name = "metadata"
	RNMetadataService       resource.Name = "metadata-service"
	RNGatewayConfig         resource.Name = "gateway-config"
	RNGateway               resource.Name = "gateway"
	RNGatewayService        resource.Name = "gateway-service"
	RNGatewayPDB            resource.Name = "gateway-pdb"
	RNGatewayServiceAccount resource.Name = "gateway-serviceaccount"
	RNGatewayRole           resource.Name = "gateway-role"
	RNGatewayRoleBinding    resource.Name = "gateway-rolebinding"
	RNEngineState           resource.Name = "engine-state"
)

// Labels on every composed object.
const (
	LabelInstance  = "firebolt.io/instance"
	LabelComponent = "firebolt.io/component"

	// AnnotationConfigHash on a pod template carries the hash of the
	// configuration the pods read, so a configuration change rolls them.
	AnnotationConfigHash = "firebolt.io/config-hash"
)

// Components, as the firebolt.io/component label names them.
type component string

const (
	componentPostgres component = "postgres"
	componentMetadata component = "metadata"
	componentGateway  component = "gateway"
)

// Fixed ports of the instance's services.
const (
	MetadataPort int32 = 7000
	PostgresPort int32 = 5432
	GatewayPort  int32 = 80
)

// names derives every object name of one instance from its claim name, so
// that a name is spelled in one place.
type names struct {
	instance  string
	namespace string
}

func (n names) postgresCredentials() string { return contract.PostgresCredentials(n.instance) }
func (n names) postgres() string            { return n.instance + "-metadata-pg" }

// postgresVolume is the claim the StatefulSet controller creates for the
// only PostgreSQL pod: <template>-<statefulset>-<ordinal>.
func (n names) postgresVolume() string { return postgresVolume + "-" + n.postgres() + "-0" }
func (n names) metadataConfig() string { return n.instance + "-metadata-config" }
func (n names) metadata() string       { return n.instance + "-metadata" }
func (n names) gatewayConfig() string  { return n.instance + "-gateway-config" }
func (n names) gateway() string        { return n.instance + "-gateway" }

func (n names) postgresHost() string {
	return contract.ServiceHost(n.postgres(), n.namespace)
}

// metadataEndpoint is where engines reach the metadata service.
func (n names) metadataEndpoint() string {
	return fmt.Sprintf("%s:%d", contract.ServiceHost(n.metadata(), n.namespace), MetadataPort)
}

// gatewayEndpoint is the gateway Service's host; clients use port 80.
func (n names) gatewayEndpoint() string {
	return contract.ServiceHost(n.gateway(), n.namespace)
}

// labels are the labels of every object of component c, and the selector of
// its pods.
func (n names) labels(c component) map[string]string {
	return map[string]string{LabelInstance: n.instance, LabelComponent: string(c)}
}

// validateName refuses an instance name that one of its objects could not
// carry, as the claim's admission does, for a composite that did not come
// through it.
func validateName(instance string) *blocked {
	var errs field.ErrorList
	p := field.NewPath("metadata", "name")
	if l := v1alpha1.ClaimNameLimits[v1alpha1.XFireboltInstanceKind]; len(instance) > l.MaxLength {
		errs = append(errs, field.Invalid(p, instance, l.Message()))
	}
	for _, msg := range validation.IsDNS1035Label(instance) {
		errs = append(errs, field.Invalid(p, instance, msg))
	}
	if len(errs) == 0 {
		return nil
	}
	return &blocked{reason: ReasonLimitExceeded, message: errs.ToAggregate().Error()}
}
