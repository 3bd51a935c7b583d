package instance

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/instancestate"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// Condition types the composer publishes on the composite and the claim.
const (
	TypeMetadataReady = "MetadataReady"
	TypeGatewayReady  = "GatewayReady"
)

// Condition reasons, as the original operator's.
const (
	ReasonReady                         = "Ready"
	ReasonProvisioning                  = "Provisioning"
	ReasonTemplateRejected              = "TemplateRejected"
	ReasonPostgresEnsureFailed          = "PostgresEnsureFailed"
	ReasonPostgresSecretPreflightFailed = "PostgresSecretPreflightFailed"
	ReasonEnsureFailed                  = "EnsureFailed"
	ReasonLimitExceeded                 = "LimitExceeded"
)

// ProvisioningTTL is how soon Crossplane calls again while the instance is
// not Ready. Crossplane also reacts to changes of the composed workloads,
// so this only bounds how long a missed event can delay progress.
const ProvisioningTTL = 10 * time.Second

// Plan is what Compute decides: the desired composed resources (everything
// the instance owns that must survive; what is not here is deleted), the
// complete desired composite status, conditions, results (only transitions
// produce them), readiness, TTL and requirements.
type Plan = composite.Response[v1alpha1.FireboltInstanceStatus]

// The shapes every composer shares.
type (
	// Desired is one desired composed resource and its readiness.
	Desired = composite.Desired
	// Result is an event for the composite and the claim.
	Result = composite.Result
)

// blocked says why a component is not rendered from the spec. Its objects
// that exist are returned unchanged instead.
type blocked struct {
	reason  string
	message string
}

// Compute decides the desired state of an instance. It is pure: inputs and
// configuration in, plan out. It errs only on a rendering bug.
func Compute(in Inputs, cfg v1beta1.Resolved) (Plan, error) {
	p, err := compute(in, cfg)
	if err != nil {
		return Plan{}, err
	}
	prev := in.XR.Status
	changed := !sameStatus(prev, p.Status)
	p.Status.LastReconciled = composite.LastReconciled(prev.LastReconciled, changed, in.Breaker, in.Now)
	if in.Breaker.Open {
		// A rotation's steps, its Certificates and CertificateRequests,
		// and each engine's routing Service are watch events of the
		// instance: a rotation over many engines opens its circuit
		// breaker, and an edit of the claim is then a dropped event. Only
		// a timed call notices it; as the class does, the instance polls
		// every 5 s while its status moves and every 30 s once it rested a
		// minute, and the lastReconciled stamp closes the breaker.
		ttl := ttlWatchesDroppedAtRest
		if last := prev.LastReconciled; changed || last == nil || in.Now.Sub(last.Time) < ttlRestedAfter {
			ttl = composite.TTLWatchesDropped
		}
		p.TTL = min(p.TTL, ttl)
	}
	return p, nil
}

// While the breaker is open: the poll once the status rested this long.
const (
	ttlWatchesDroppedAtRest = 30 * time.Second
	ttlRestedAfter          = time.Minute
)

// sameStatus compares statuses as they are written, ignoring
// lastReconciled.
func sameStatus(a, b v1alpha1.FireboltInstanceStatus) bool {
	a.LastReconciled, b.LastReconciled = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

func compute(in Inputs, cfg v1beta1.Resolved) (Plan, error) {
	if in.Claim == "" {
		return unclaimed(in, cfg), nil
	}
	c := &computation{
		in:  in,
		cfg: cfg,
		n:   names{instance: in.Claim, namespace: in.Namespace},
		plan: Plan{
			Resources: map[resource.Name]Desired{},
			Requirements: map[string]*fnv1.ResourceSelector{
				claimgen.Requirement: claimgen.Selector(v1alpha1.SchemeGroupVersion.String(), v1alpha1.FireboltInstanceKind, in.Claim, in.Namespace),
			},
		},
	}
	spec := in.XR.Spec
	id, idRefused := instanceID(spec.ID, in.XR.Status.ID, in.XR.ObjectMeta)
	c.idRefused = idRefused
	if b := validateName(in.Claim); b != nil {
		// Nothing is rendered; whatever exists is kept as it is.
		for rn := range in.Observed {
			c.freeze(rn)
		}
		c.status(id, b, b, spec.Metadata.Postgres == nil, c.gatewayTLSCondition(c.unrenderedPosture(), ""))
		c.plan.Status.GatewayTLS = in.XR.Status.GatewayTLS
		return c.plan, nil
	}

	var external string
	if spec.Metadata.Postgres != nil {
		external = spec.Metadata.Postgres.CredentialsSecretRef.Name
	}
	protected := podtemplate.Protected(c.n.postgresCredentials(), external)
	templateErrors := func(t *corev1.PodTemplateSpec, r podtemplate.Rules, p *field.Path) field.ErrorList {
		errs := podtemplate.Validate(t, r, p)
		errs = append(errs, podtemplate.CheckPodSecurity(t, cfg.PodSecurity, p)...)
		return append(errs, podtemplate.ProtectedSecretRefs(t, protected, p)...)
	}
	metaErrs := templateErrors(spec.Metadata.Template, podtemplate.MetadataRules, field.NewPath("spec", "metadata", "template"))
	gwErrs := templateErrors(spec.Gateway.Template, podtemplate.GatewayRules, field.NewPath("spec", "gateway", "template"))

	db, err := c.postgres(spec.Metadata.Postgres)
	if err != nil {
		return Plan{}, err
	}

	metaBlock := db.block
	if len(metaErrs) > 0 {
		metaBlock = &blocked{reason: ReasonTemplateRejected, message: podtemplate.Rejected("spec.metadata.template", metaErrs)}
	}
	if err := c.metadata(id, db, metaBlock); err != nil {
		return Plan{}, err
	}

	var gwBlock *blocked
	if len(gwErrs) > 0 {
		gwBlock = &blocked{reason: ReasonTemplateRejected, message: podtemplate.Rejected("spec.gateway.template", gwErrs)}
	}
	c.etls = c.decideEngineTLS(in.Now)
	posture := c.gatewayPosture(in.Now)
	gwBlock, gwHash, err := c.gateway(gwBlock, posture)
	if err != nil {
		return Plan{}, err
	}
	gwTLS := c.gatewayTLSCondition(posture, gwHash)
	c.keepEngineCABundles(gwHash)
	rolledTrust, rolledUpstream := c.rolledEngineTLS(c.etls, gwHash)
	engineTLSReady := c.engineTLSCondition(c.etls, rolledTrust, rolledUpstream)

	c.status(id, metaBlock, gwBlock, spec.Metadata.Postgres == nil, gwTLS, engineTLSReady)
	c.plan.Status.GatewayTLS = in.XR.Status.GatewayTLS
	if gwHash != "" {
		c.plan.Status.GatewayTLS = posture.status
	}
	c.plan.Status.EngineTLS = c.etls.status
	c.plan.Status.RolledEngineTrustCAs = rolledTrust
	c.plan.Status.RolledEngineUpstream = rolledUpstream
	authReady := c.auth(in.Now)
	c.plan.Conditions = append(c.plan.Conditions, authReady)
	if err := c.publish(authReady); err != nil {
		return Plan{}, err
	}
	for _, w := range c.wake {
		c.plan.TTL = min(c.plan.TTL, w)
	}
	if r := engineRegistration(spec.Metadata.EngineRegistration, in.Conditions); r != nil {
		c.plan.Conditions = append(c.plan.Conditions, *r)
	}
	if w := wakeOnZero(spec.Gateway.Template, in.Conditions); w != nil {
		c.plan.Conditions = append(c.plan.Conditions, *w)
	}
	c.adoptRequirements()
	c.adopt()
	c.generations(metaBlock == nil && gwBlock == nil)
	return c.plan, nil
}

// unclaimed is the plan for a composite without claim labels: objects are
// named after the claim and live in its namespace, so nothing can be
// rendered. What exists is kept as it is and the status stays as published.
func unclaimed(in Inputs, cfg v1beta1.Resolved) Plan {
	const what, claim = "instances", v1alpha1.FireboltInstanceKind
	return Plan{
		Resources: composite.KeepObserved(in.Observed),
		Status:    in.XR.Status,
		Conditions: []Condition{
			composite.ClaimLabelsMissing(TypeMetadataReady, in.XR.Name, what, claim),
			composite.ClaimLabelsMissing(TypeGatewayReady, in.XR.Name, what, claim),
		},
		TTL: cfg.StableTTL,
	}
}

type computation struct {
	in   Inputs
	cfg  v1beta1.Resolved
	n    names
	plan Plan
	// idRefused says why spec.id is not the account in use, if so: the
	// metadata service keeps running with the published id, and its
	// condition tells the spec is not in effect.
	idRefused *blocked
	// wake are timers a component wants to be called back after.
	wake []time.Duration
	// etls is engine TLS as this call decides it: what the gateway
	// renders of it.
	etls engineTLS
	// renderedFiles are the gateway ConfigMap's files this call renders;
	// nil when it renders none.
	renderedFiles map[string]string
	// holdComposed keeps status.composedGeneration where it was: the call
	// leaves out objects it is about to adopt.
	holdComposed bool
}

// add renders a typed object as desired state under rn.
func (c *computation) add(rn resource.Name, o runtime.Object) error {
	u, err := composite.ToDesired(o)
	if err != nil {
		return err
	}
	c.plan.Resources[rn] = Desired{Object: u, Ready: resourceReady(c.in.Observed[rn])}
	return nil
}

// freeze returns the observed objects of a blocked component unchanged, so
// nothing that exists is deleted or rolled.
func (c *computation) freeze(rns ...resource.Name) {
	for _, rn := range rns {
		if o, ok := c.in.Observed[rn]; ok {
			c.plan.Resources[rn] = Desired{Object: composite.Unchanged(o.UnstructuredContent()), Ready: resourceReady(o)}
		}
	}
}

func (c *computation) addAll(objs map[resource.Name]runtime.Object) error {
	for rn, o := range objs {
		if err := c.add(rn, o); err != nil {
			return err
		}
	}
	return nil
}

// partsHash is the first 16 hex characters of SHA-256 over the parts,
// each length-prefixed so that moving bytes between parts changes it.
func partsHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		var l [8]byte
		binary.BigEndian.PutUint64(l[:], uint64(len(p)))
		h.Write(l[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// publish composes the ConfigMap engines read the instance from (see
// package instancestate), from the status and AuthReady this call writes.
func (c *computation) publish(authReady Condition) error {
	cm, err := instancestate.ConfigMap(c.in.Namespace, c.in.Claim, instancestate.Of(c.in.Claim, c.in.XR.Spec, c.plan.Status, &authReady))
	if err != nil {
		return err
	}
	return c.add(RNEngineState, cm)
}
