package instance

import (
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
)

// Requirement names under which Crossplane sends what the composer asks for
// by name: the PostgreSQL credentials Secret (the user's, or the internal
// one while it is not composed) and the internal PostgreSQL's volume claim.
const (
	reqPostgresCredentials = "postgres-credentials"
	reqPostgresVolume      = "postgres-volume"
)

// Inputs is everything compute needs, decoded from the request.
type Inputs struct {
	// XR is the observed composite.
	XR v1alpha1.XFireboltInstance

	// Claim name and namespace: objects are named after the claim and live
	// in its namespace. Empty when the composite has no claim labels.
	Claim string
	// Namespace of the claim.
	Namespace string

	// Observed composed resources by resource name.
	Observed map[resource.Name]*composed.Unstructured

	// Conditions the composite carries now, by type, to tell transitions.
	Conditions map[string]Condition

	// Breaker is what Crossplane's Responsive condition says of its
	// circuit breaker for the instance.
	Breaker composite.Breaker

	// PostgresSecret is what Crossplane found for spec.metadata.postgres's
	// credentials Secret; zero unless PostgreSQL is external.
	PostgresSecret SecretFacts

	// Existing is what Crossplane found, by name, of an internal PostgreSQL
	// whose credentials Secret is not observed as composed.
	Existing ExistingDatabase

	// CandidatePassword is a fresh password, used only when the internal
	// PostgreSQL credentials Secret does not exist and no database that
	// could hold an older one does.
	CandidatePassword string

	// ClaimGen is the FireboltInstance claim itself, read for its
	// generation.
	ClaimGen claimgen.Claim

	// Auth is what auth reads: the admin Secret's facts, the signing keys'
	// public keys, the engines' published auth hashes.
	Auth AuthInputs

	// EngineTLS is what engine TLS reads: the routes engines publish and
	// the CAs of their certificates.
	EngineTLS EngineTLSInputs

	// Adoption is what a claim a migration made adopts of the original
	// operator's components.
	Adoption Adoption

	// Now is the time of the call; only signing-key rotation reads it.
	Now time.Time
}

// ExistingDatabase is evidence of an internal PostgreSQL database that
// outlived its credentials Secret, or of a Secret someone restored.
type ExistingDatabase struct {
	// Resolved is false until Crossplane has looked for both.
	Resolved bool
	// Secret is the credentials Secret found by name, if any.
	Secret *composed.Unstructured
	// Volume is the name of the PostgreSQL volume claim found, if any.
	Volume string
}

// SecretFacts are the facts about a required Secret that compute may see:
// never its values.
type SecretFacts struct {
	// Resolved is false until Crossplane has fetched the Secret.
	Resolved bool
	// Found is false when the Secret does not exist.
	Found bool
	// Keys holds the keys whose value is non-empty.
	Keys map[string]bool
	// ResourceVersion changes whenever the Secret is written, so the
	// metadata pods roll when the credentials are rotated in place.
	ResourceVersion string
}

// Condition is a status condition as compute sees it.
type Condition = composite.Condition

// read decodes the call. It does no I/O beyond asking pw for a candidate
// password, and only when the instance runs its own PostgreSQL.
func read(c composite.Call, pw PasswordGenerator) (Inputs, error) {
	in := Inputs{}
	if err := composite.Decode(c.XR.Resource.UnstructuredContent(), &in.XR); err != nil {
		return Inputs{}, errors.Wrap(err, "cannot decode XFireboltInstance")
	}
	in.Conditions = composite.Conditions(c.XR.Resource.UnstructuredContent())
	in.Breaker = composite.BreakerOf(c.XR.Resource.UnstructuredContent())
	var err error
	if in.Observed, err = composite.ObservedComposed(c.Req); err != nil {
		return Inputs{}, err
	}
	claim := composite.ClaimOf(c.XR)
	if !claim.Known() {
		return in, nil
	}
	in.Claim, in.Namespace = claim.Name, claim.Namespace
	if in.ClaimGen, err = claimgen.Read(c.Req, in.Claim, in.XR.Spec); err != nil {
		return Inputs{}, err
	}

	if in.Auth, err = readAuth(c.Req, in.XR.Spec.Auth); err != nil {
		return Inputs{}, err
	}
	if in.EngineTLS, err = readEngineTLS(c.Req); err != nil {
		return Inputs{}, err
	}
	if in.Adoption, err = readAdoption(c.Req, in, c.Config.PodSecurity); err != nil {
		return Inputs{}, err
	}

	if in.XR.Spec.Metadata.Postgres != nil {
		items, resolved, err := composite.Required(c.Req, reqPostgresCredentials, "PostgreSQL credentials Secret")
		if err != nil {
			return Inputs{}, err
		}
		in.PostgresSecret = secretFacts(items, resolved)
		return in, nil
	}
	if _, ok := in.Observed[RNPostgresCredentials]; ok {
		return in, nil
	}
	secrets, sres, err := composite.Required(c.Req, reqPostgresCredentials, "PostgreSQL credentials Secret")
	if err != nil {
		return Inputs{}, err
	}
	vols, vres, err := composite.Required(c.Req, reqPostgresVolume, "PostgreSQL volume claim")
	if err != nil {
		return Inputs{}, err
	}
	in.Existing = ExistingDatabase{Resolved: sres && vres}
	if len(secrets) > 0 {
		in.Existing.Secret = &composed.Unstructured{Unstructured: *secrets[0].Resource}
	}
	if len(vols) > 0 {
		in.Existing.Volume = vols[0].Resource.GetName()
	}
	_, stsExists := in.Observed[RNPostgres]
	if in.Existing.Resolved && in.Existing.Secret == nil && in.Existing.Volume == "" && !stsExists {
		p, err := pw.Password()
		if err != nil {
			return Inputs{}, errors.Wrap(err, "cannot generate PostgreSQL password")
		}
		in.CandidatePassword = p
	}
	return in, nil
}

func secretFacts(items []resource.Required, resolved bool) SecretFacts {
	f := SecretFacts{Resolved: resolved}
	if len(items) == 0 {
		return f
	}
	s := items[0].Resource
	f.Found = true
	f.ResourceVersion = s.GetResourceVersion()
	f.Keys = map[string]bool{}
	data, _ := s.Object["data"].(map[string]any)
	for k, v := range data {
		if str, ok := v.(string); ok && str != "" {
			f.Keys[k] = true
		}
	}
	return f
}
