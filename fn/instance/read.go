package instance

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
)

// Claim labels Crossplane puts on a composite that has a claim.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
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
	// in its namespace.
	Claim string
	// Namespace of the claim.
	Namespace string

	// Observed composed resources by resource name.
	Observed map[resource.Name]*composed.Unstructured

	// Conditions the composite carries now, by type, to tell transitions.
	Conditions map[string]Condition

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
type Condition struct {
	Type    string                 `json:"type"`
	Status  corev1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason"`
	Message string                 `json:"message,omitempty"`
}

// read decodes the request. It does no I/O beyond asking pw for a candidate
// password, and only when the instance runs its own PostgreSQL.
func read(req *fnv1.RunFunctionRequest, pw PasswordGenerator) (Inputs, error) {
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return Inputs{}, errors.Wrap(err, "cannot get observed composite resource")
	}
	in := Inputs{}
	if err := fromMap(oxr.Resource.UnstructuredContent(), &in.XR); err != nil {
		return Inputs{}, errors.Wrap(err, "cannot decode XFireboltInstance")
	}
	l := oxr.Resource.GetLabels()
	in.Claim, in.Namespace = l[labelClaimName], l[labelClaimNamespace]
	if in.Claim == "" || in.Namespace == "" {
		return Inputs{}, errors.Errorf("composite has no %s and %s labels: FireboltInstance objects are composed into the claim's namespace, so apply a FireboltInstance claim instead of an XFireboltInstance", labelClaimName, labelClaimNamespace)
	}

	in.Conditions = conditions(oxr.Resource.UnstructuredContent())
	if in.ClaimGen, err = claimgen.Read(req, in.Claim, in.XR.Spec); err != nil {
		return Inputs{}, err
	}

	ocds, err := request.GetObservedComposedResources(req)
	if err != nil {
		return Inputs{}, errors.Wrap(err, "cannot get observed composed resources")
	}
	in.Observed = make(map[resource.Name]*composed.Unstructured, len(ocds))
	for n, o := range ocds {
		in.Observed[n] = o.Resource
	}

	if in.XR.Spec.Metadata.Postgres != nil {
		items, resolved, err := request.GetRequiredResource(req, reqPostgresCredentials)
		if err != nil {
			return Inputs{}, errors.Wrap(err, "cannot get required PostgreSQL credentials Secret")
		}
		in.PostgresSecret = secretFacts(items, resolved)
		return in, nil
	}
	if _, ok := in.Observed[RNPostgresCredentials]; ok {
		return in, nil
	}
	secrets, sres, err := request.GetRequiredResource(req, reqPostgresCredentials)
	if err != nil {
		return Inputs{}, errors.Wrap(err, "cannot get required PostgreSQL credentials Secret")
	}
	vols, vres, err := request.GetRequiredResource(req, reqPostgresVolume)
	if err != nil {
		return Inputs{}, errors.Wrap(err, "cannot get required PostgreSQL volume claim")
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

// fromMap decodes unstructured content into a typed object through JSON,
// which also turns the float64 numbers of a protobuf Struct into integers.
func fromMap(m map[string]any, into any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// conditions reads status.conditions, which Crossplane maintains and the
// API types leave out.
func conditions(xr map[string]any) map[string]Condition {
	var st struct {
		Status struct {
			Conditions []Condition `json:"conditions"`
		} `json:"status"`
	}
	out := map[string]Condition{}
	if err := fromMap(xr, &st); err != nil {
		return out
	}
	for _, c := range st.Status.Conditions {
		out[c.Type] = c
	}
	return out
}
