package instance

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/instance/envoyconfig"
)

// The three components. Each renders from the spec unless it is blocked;
// a blocked component's existing objects are returned unchanged.

// database is how the metadata service reaches PostgreSQL.
type database struct {
	target postgresTarget
	// credentials names the Secret mounted as the PostgreSQL credentials.
	credentials string
	// version is the external credentials Secret's resourceVersion.
	version string
	// block says why the metadata service cannot be rendered, if so.
	block *blocked
}

// postgres renders the internal PostgreSQL, or requires and checks the
// external credentials Secret.
func (c *computation) postgres(ext *v1alpha1.PostgresSpec) (database, error) {
	if ext != nil {
		return c.externalPostgres(ext), nil
	}
	n := c.n
	db := database{
		target:      postgresTarget{Host: n.postgresHost(), Port: PostgresPort, Database: postgresDatabase, Schema: postgresDefaultSchema},
		credentials: n.postgresCredentials(),
	}
	secret := c.in.Observed[RNPostgresCredentials]
	if secret == nil {
		var block *blocked
		if secret, block = c.existingDatabase(); block != nil {
			c.freeze(RNPostgres, RNPostgresHeadless)
			db.block = block
			return db, nil
		}
	}
	// A minted Secret goes out first and the StatefulSet only once the
	// Secret exists: then a StatefulSet or its volume claim without the
	// Secret always means a database initialised with a password that is
	// gone, never a first apply Crossplane did not finish.
	minting := secret == nil
	creds, problems := postgresCredentialsFor(secret, c.in.CandidatePassword)
	if len(problems) > 0 {
		c.freeze(RNPostgresCredentials, RNPostgres, RNPostgresHeadless)
		db.block = &blocked{reason: ReasonPostgresEnsureFailed, message: fmt.Sprintf(
			"PostgreSQL credentials Secret %q was changed and is not regenerated, because PostgreSQL keeps the password it was initialised with: %s",
			n.postgresCredentials(), strings.Join(problems, "; "))}
		return db, nil
	}
	objs := map[resource.Name]runtime.Object{
		RNPostgresCredentials: renderPostgresSecret(n, creds),
		RNPostgresHeadless:    renderPostgresService(n),
	}
	if !minting {
		objs[RNPostgres] = renderPostgresStatefulSet(n, c.cfg.Images.Postgres)
	}
	return db, c.addAll(objs)
}

// externalPostgres asks Crossplane for the user's credentials Secret (on
// every call, so Crossplane keeps watching it) and checks it has the keys
// the metadata service reads. Only key names are looked at.
func (c *computation) externalPostgres(ext *v1alpha1.PostgresSpec) database {
	name, ns := ext.CredentialsSecretRef.Name, c.n.namespace
	c.plan.Requirements[reqPostgresCredentials] = &fnv1.ResourceSelector{
		ApiVersion: "v1",
		Kind:       "Secret",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: name},
		Namespace:  &ns,
	}
	db := database{
		target:      postgresTarget{Host: ext.Host, Port: ext.Port, Database: ext.Database, Schema: ext.Schema},
		credentials: name,
	}
	if db.target.Port == 0 {
		db.target.Port = PostgresPort
	}
	if db.target.Schema == "" {
		db.target.Schema = postgresDefaultSchema
	}
	s := c.in.PostgresSecret
	switch {
	case !s.Resolved:
		db.block = &blocked{reason: ReasonProvisioning, message: fmt.Sprintf(
			"waiting for Crossplane to fetch the PostgreSQL credentials Secret %q", name)}
	case !s.Found:
		db.block = &blocked{reason: ReasonPostgresSecretPreflightFailed, message: fmt.Sprintf(
			"PostgreSQL credentials Secret %q (spec.metadata.postgres.credentialsSecretRef.name) not found in namespace %q", name, ns)}
	default:
		if missing := missingKeys(s.Keys, KeyUsername, KeyPassword); len(missing) > 0 {
			db.block = &blocked{reason: ReasonPostgresSecretPreflightFailed, message: fmt.Sprintf(
				"PostgreSQL credentials Secret %q (spec.metadata.postgres.credentialsSecretRef.name) has no non-empty key(s) %s", name, quoteAll(missing))}
		}
		db.version = s.ResourceVersion
	}
	return db
}

func (c *computation) metadata(id string, db database, block *blocked) error {
	if block != nil {
		c.freeze(RNMetadataConfig, RNMetadata, RNMetadataService)
		return nil
	}
	spec := c.in.XR.Spec
	config, err := renderMetadataConfig(id, db.target, spec.MetadataNG)
	if err != nil {
		return err
	}
	// An in-place rotation of external credentials must restart the
	// service, which reads them at start; the Secret's resourceVersion
	// says it was written without putting its content in an annotation.
	hash := partsHash(config, db.credentials, db.version)
	return c.addAll(map[resource.Name]runtime.Object{
		RNMetadataConfig: renderMetadataConfigMap(c.n, config),
		RNMetadata: renderMetadataDeployment(c.n, metadataParams{
			Image:             c.cfg.Images.Metadata,
			NG:                spec.MetadataNG,
			CredentialsSecret: db.credentials,
			ConfigHash:        hash,
			Template:          spec.Metadata.Template,
		}),
		RNMetadataService: renderMetadataService(c.n),
	})
}

var gatewayResources = []resource.Name{
	RNGatewayConfig, RNGateway, RNGatewayService, RNGatewayPDB, RNGatewayServiceAccount, RNGatewayRole, RNGatewayRoleBinding,
}

// gateway renders the gateway with the listener's posture p unless block
// says why it cannot be; the returned block adds a configuration the
// gateway package refuses. hash is the rendered configuration's, "" when
// nothing is rendered.
func (c *computation) gateway(block *blocked, p posture) (*blocked, string, error) {
	if block == nil && c.etls.frozen {
		block = &blocked{reason: ReasonProvisioning, message: "the gateway keeps its configuration: " + c.etls.frozenWhy()}
	}
	if block == nil {
		files, err := c.gatewayFiles(p)
		if err != nil {
			block = &blocked{reason: ReasonEnsureFailed, message: err.Error()}
		} else {
			hash := gatewayHash(files, p, c.etls)
			c.renderedFiles = files
			return nil, hash, c.renderGateway(files, hash, p)
		}
	}
	c.freeze(gatewayResources...)
	c.freeze(RNGatewayTLS)
	c.freeze(c.engineCABundles()...)
	return block, "", nil
}

// gatewayFiles are the gateway ConfigMap's files for posture p.
func (c *computation) gatewayFiles(p posture) (map[string]string, error) {
	spec := c.in.XR.Spec.Gateway
	return envoyconfig.Files(envoyconfig.Params{
		Namespace: c.n.namespace, MetricsPort: spec.MetricsPort, WakeAgent: wakeEnabled(spec.Template), Listener: p.listener,
		Upstream: c.etls.upstream,
	})
}

// gatewayHash is the config hash of the files and what is mounted for
// them: a plain gateway's is envoy.yaml's alone, as it always was. The
// engine CA bundle's content is in it, so a change of the CAs engines are
// verified against rolls every pod, and the instance can tell when every
// pod trusts them.
func gatewayHash(files map[string]string, p posture, e engineTLS) string {
	var parts []string
	for _, k := range envoyconfig.FileKeys(files) {
		parts = append(parts, files[k])
	}
	if p.cert != "" {
		parts = append(parts, p.cert, p.clientCA, p.crl)
	}
	if e.mount {
		parts = append(parts, "engine-ca", e.bundle, e.crl)
	}
	return partsHash(parts...)
}

// postureHash is the hash the gateway would carry with posture p; "" if
// it cannot be rendered.
func (c *computation) postureHash(p posture) string {
	files, err := c.gatewayFiles(p)
	if err != nil {
		return ""
	}
	return gatewayHash(files, p, c.etls)
}

func (c *computation) renderGateway(files map[string]string, hash string, p posture) error {
	spec := c.in.XR.Spec.Gateway
	replicas := defaultGatewayCount
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	objs := map[resource.Name]runtime.Object{
		RNGatewayConfig: renderGatewayConfigMap(c.n, files),
		RNGateway: renderGatewayDeployment(c.n, gatewayParams{
			Image:       c.cfg.Images.Gateway,
			Replicas:    replicas,
			MetricsPort: envoyconfig.MetricsPortOrDefault(spec.MetricsPort),
			ConfigHash:  hash,
			Files:       envoyconfig.FileKeys(files),
			Posture:     p,
			Engine:      c.etls,
			Template:    spec.Template,
			WakeAgent:   c.cfg.Images.WakeAgent,
		}),
		RNGatewayService: renderGatewayService(c.n),
		RNGatewayPDB:     renderGatewayPDB(c.n),
	}
	if c.etls.mount {
		objs[c.etls.bundleRN] = renderEngineCABundle(c.n, c.etls)
	}
	// A user who names the gateway's service account owns its identity
	// and its RBAC; the operator's account, Role and binding are left out,
	// and so deleted, and the gateway runs no wake agent.
	if wakeEnabled(spec.Template) {
		objs[RNGatewayServiceAccount] = renderGatewayServiceAccount(c.n)
		objs[RNGatewayRole] = renderGatewayRole(c.n)
		objs[RNGatewayRoleBinding] = renderGatewayRoleBinding(c.n)
	}
	return c.addAll(objs)
}
