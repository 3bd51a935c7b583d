package engine

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/claimgen"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine/autostop"
	"github.com/firebolt-db/firebolt-crossplane/fn/instancestate"
	"github.com/firebolt-db/firebolt-crossplane/fn/phased"
)

// Names of the requirements the composer asks Crossplane for.
const (
	// RequirementInstanceState is the ConfigMap in which the instance
	// publishes what its engines read of it (package instancestate);
	// RequirementInstance is the instance claim itself, asked for only while
	// that ConfigMap is missing (an instance not yet composed by this
	// version, or none at all). The claim's status changes at every step of
	// the instance, and a required object is watched: requiring it always
	// called every engine of the instance on each of those writes.
	RequirementInstanceState = "instance-state"
	RequirementInstance      = "instance"
	// RequirementClassSpec is the ConfigMap in which the class publishes
	// its spec (contract.ClassSpecConfigMap); RequirementClass is the class
	// claim itself, asked for only while that ConfigMap is missing, to tell
	// a class that does not exist from one that has not published yet. The
	// claim's status changes on every bind, and a required object is
	// watched: requiring it always would call every engine of a class
	// again whenever one more binds.
	RequirementClassSpec = "class-spec"
	RequirementClass     = "class"
	// RequirementAdminSecret is the Secret holding the admin password of
	// the instance's auth (spec.auth.local.admin.password), asked for only
	// while the instance enables auth. Only its resourceVersion and whether
	// its key is set are read, never a value.
	RequirementAdminSecret = "auth-admin-secret"
)

// Inputs is everything Compute decides from, read from the request. It
// holds no live signals (see Signals).
type Inputs struct {
	// Composite is the observed XFireboltEngine's identity.
	Composite CompositeMeta

	// Engine and Namespace are the claim's name and namespace: the engine's
	// name users route to, and where every object lives. Empty when the
	// composite carries no claim labels.
	Engine    string
	Namespace string

	Spec   v1alpha1.FireboltEngineSpec
	Status v1alpha1.FireboltEngineStatus

	// Renderings are the recorded renderings of status.renderings by
	// generation, decoded.
	Renderings map[int]Recording

	// Observed are the observed composed resources by
	// composition-resource-name.
	Observed map[resource.Name]*ObservedObject

	// RenderingsVerified is the composite's RenderingsVerified condition
	// as observed; nil when it has none.
	RenderingsVerified *Condition

	// Breaker: when Crossplane's circuit breaker for this composite is
	// open (its Responsive condition is False), so watch events about it,
	// an edit among them, are being dropped.
	Breaker composite.Breaker

	Instance InstanceRef
	Class    ClassRef

	// Claim is the FireboltEngine claim itself, read for its generation.
	Claim claimgen.Claim

	// AnalysisSecret is the Secret spec.analysis.query.secretRef names.
	AnalysisSecret AnalysisSecret

	// RolledPod is the pod an in-place update let go last, when Crossplane
	// sent it (rolledPodName).
	RolledPod *phased.Pod

	// ServingCert is what cert-manager issued for the current generation's
	// Certificate, when it serves TLS.
	ServingCert CertIssue

	// Adopt is the original operator's generation a migrated claim asks
	// to adopt, and its live objects.
	Adopt Adoption

	// WakeStamp is the composite's firebolt.io/wake-requested annotation,
	// which Crossplane copies from the claim the wake agent stamps; "" when
	// absent.
	WakeStamp string

	Config v1beta1.Resolved
}

// CompositeMeta identifies the composite.
type CompositeMeta struct {
	Name string
	UID  string
}

// InstanceRef is the referenced FireboltInstance, read from the ConfigMap
// that publishes its state for engines or, while that is missing, from its
// claim.
type InstanceRef struct {
	Name string
	// StateResolved: Crossplane has tried to fetch the ConfigMap;
	// Published: it found it.
	StateResolved, Published bool
	// Resolved is false until Crossplane has tried to fetch what the
	// instance is read from (the ConfigMap, else the claim).
	Resolved bool
	// Found is true when it exists; then Spec and Status hold what engines
	// read of it.
	Found  bool
	Spec   v1alpha1.FireboltInstanceSpec
	Status v1alpha1.FireboltInstanceStatus
	// AuthReady is the instance's AuthReady condition; nil when it reports
	// none.
	AuthReady *Condition
	// AdminSecret are the facts of the admin password's Secret while the
	// instance enables auth: its version and whether its key is set, never
	// its value.
	AdminSecret composite.SecretFacts
	// Err is why a found instance could not be decoded.
	Err string
}

// ClassRef is the referenced FireboltEngineClass, read from the ConfigMap
// that publishes its spec; Name is empty when the engine references none.
type ClassRef struct {
	Name string
	// Resolved is false until Crossplane has tried to fetch the ConfigMap
	// and, when it is missing, the claim.
	Resolved bool
	// Found: the class exists (its ConfigMap or its claim was found).
	Found bool
	// SpecResolved: Crossplane has tried to fetch the ConfigMap.
	SpecResolved bool
	// Published: its ConfigMap was found; then Spec holds the spec it
	// publishes, or Err says why it cannot be decoded.
	Published bool
	Spec      v1alpha1.FireboltEngineClassSpec
	Err       string
}

// Read decodes the call into Inputs. It fails only on a request that
// cannot be decoded at all; anything a user can fix becomes a condition in
// Compute.
func Read(c composite.Call) (Inputs, error) {
	u := c.XR.Resource
	claim := composite.ClaimOf(c.XR)
	in := Inputs{
		// Numbers decoded from protobuf are float64, which the typed
		// unstructured getters read as absent.
		Composite: CompositeMeta{Name: u.GetName(), UID: string(u.GetUID())},
		Engine:    claim.Name,
		Namespace: claim.Namespace,
		Config:    c.Config,
	}
	var err error
	if err := decodeField(u.Object, "spec", &in.Spec); err != nil {
		return Inputs{}, errors.Wrap(err, "cannot decode composite spec")
	}
	if err := decodeStatus(u.Object, &in.Status); err != nil {
		return Inputs{}, errors.Wrap(err, "cannot decode composite status")
	}
	in.Renderings = decodeRecordings(in.Engine, in.Namespace, in.Config.PodSecurity, in.Status.Renderings)
	in.RenderingsVerified = composite.ConditionOf(u.Object, TypeRenderingsVerified)
	in.Breaker = composite.BreakerOf(u.Object)
	in.WakeStamp = u.GetAnnotations()[autostop.WakeAnnotation]

	in.Observed = observedComposed(c.Req.GetObserved().GetResources())
	if in.Adopt, err = readAdoption(c, in); err != nil {
		return Inputs{}, err
	}

	if in.Engine != "" {
		if in.Claim, err = claimgen.Read(c.Req, in.Engine, in.Spec); err != nil {
			return Inputs{}, err
		}
	}

	if in.Instance, err = readInstance(c, in.Spec.InstanceRef); err != nil {
		return Inputs{}, err
	}

	if in.ServingCert, err = readServingCert(c, in); err != nil {
		return Inputs{}, err
	}

	if in.Spec.EngineClassRef != nil {
		if in.Class, err = readClass(c, *in.Spec.EngineClassRef); err != nil {
			return Inputs{}, err
		}
	}
	if a := in.Spec.Analysis; a != nil && a.Query.SecretRef != "" {
		if in.AnalysisSecret, err = readAnalysisSecret(c, a.Query.SecretRef); err != nil {
			return Inputs{}, err
		}
	}
	if name, ordinal, ok := rolledPodName(in); ok {
		pod, _, err := composite.RequiredNamed(c.Req, RequirementRolledPod, "pod "+name, name)
		if err != nil {
			return Inputs{}, err
		}
		if pod != nil {
			in.RolledPod = &phased.Pod{Ordinal: ordinal, Revision: pod.GetLabels()[appsv1.ControllerRevisionHashLabelKey]}
		}
	}
	return in, nil
}

// requirementsFetched: Crossplane has fetched everything this call requires
// of others (the instance, the analysis Secret, the admin password's
// Secret). Until it has, it calls again within the same reconcile and keeps
// only the last answer, so I/O that should happen once per reconcile waits
// for the call that has them all.
func (in Inputs) requirementsFetched() bool {
	if !in.Instance.Resolved {
		return false
	}
	if a := in.Spec.Analysis; a != nil && a.Query.SecretRef != "" && !in.AnalysisSecret.Resolved {
		return false
	}
	if pw, ok := adminPassword(in.Instance); ok && validSecretKey(pw) == "" && !in.Instance.AdminSecret.Resolved {
		return false
	}
	if servingRequestName(in, in.Status.CurrentGeneration) != "" && !in.ServingCert.Resolved {
		return false
	}
	return true
}

// readAnalysisSecret reads the Secret spec.analysis.query.secretRef names.
// Its values are only ever handed to the check's Authorization header.
func readAnalysisSecret(c composite.Call, name string) (AnalysisSecret, error) {
	data, found, resolved, err := composite.RequiredSecret(c.Req, RequirementAnalysisSecret, name)
	if err != nil {
		return AnalysisSecret{}, err
	}
	return AnalysisSecret{Resolved: resolved, Found: found, Data: data}, nil
}

// readClass reads the class from the ConfigMap it publishes its spec in
// and, while that is missing, from whether its claim exists.
func readClass(c composite.Call, name string) (ClassRef, error) {
	ref := ClassRef{Name: name}
	cm, resolved, err := composite.RequiredNamed(c.Req, RequirementClassSpec, kindConfigMap, contract.ClassSpecConfigMap(name))
	if err != nil || !resolved {
		return ref, err
	}
	ref.SpecResolved = true
	if cm != nil {
		ref.Resolved, ref.Found, ref.Published = true, true, true
		spec, ok, _ := unstructured.NestedString(cm.Object, "data", contract.ClassSpecKey)
		switch {
		case !ok:
			// The class could not publish its spec and says why; a
			// ConfigMap with neither key was not written by the class.
			ref.Err = "cannot decode its spec: ConfigMap " + cm.GetName() + " has no data." + contract.ClassSpecKey
			if msg, ok, _ := unstructured.NestedString(cm.Object, "data", contract.ClassSpecErrorKey); ok && msg != "" {
				ref.Err = BoundMessage(msg)
			}
		default:
			if err := json.Unmarshal([]byte(spec), &ref.Spec); err != nil {
				ref.Err = "cannot decode its spec: " + err.Error()
			}
		}
		return ref, nil
	}
	claim, resolved, err := composite.RequiredNamed(c.Req, RequirementClass, v1alpha1.FireboltEngineClassKind, name)
	if err != nil {
		return ref, err
	}
	ref.Resolved, ref.Found = resolved, claim != nil
	return ref, nil
}

// readInstance reads the instance from the ConfigMap it publishes for its
// engines or, while that is missing, from its claim, and the facts of the
// admin password's Secret its auth names.
func readInstance(c composite.Call, name string) (InstanceRef, error) {
	ref := InstanceRef{Name: name}
	cm, resolved, err := composite.RequiredNamed(c.Req, RequirementInstanceState, kindConfigMap, instancestate.ConfigMapName(name))
	if err != nil || !resolved {
		return ref, err
	}
	ref.StateResolved = true
	switch {
	case cm != nil:
		ref.Published, ref.Resolved, ref.Found = true, true, true
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		st, problem := instancestate.Decode(data)
		if problem != "" {
			ref.Err = BoundMessage(problem)
			return ref, nil
		}
		ref.Spec, ref.Status, ref.AuthReady = st.Spec(), st.Status(), st.AuthReady
	default:
		obj, resolved, err := composite.RequiredNamed(c.Req, RequirementInstance, v1alpha1.FireboltInstanceKind, name)
		if err != nil {
			return ref, err
		}
		ref.Resolved = resolved
		if obj == nil {
			return ref, nil
		}
		ref.Found = true
		if err := composite.DecodeField(obj.Object, "spec", &ref.Spec); err != nil {
			ref.Err = "cannot decode its spec: " + err.Error()
		} else if err := composite.DecodeField(obj.Object, "status", &ref.Status); err != nil {
			ref.Err = "cannot decode its status: " + err.Error()
		}
		ref.AuthReady = composite.ConditionOf(obj.Object, TypeInstanceAuthReady)
	}
	if pw, ok := adminPassword(ref); ok && validSecretKey(pw) == "" {
		ref.AdminSecret = composite.RequiredSecretFacts(c.Req, RequirementAdminSecret, pw.Name, pw.Key)
	}
	return ref, nil
}

// decodeField decodes obj[key] into out as composite.DecodeField does,
// through a reused scratch buffer: the status is decoded on every call.
func decodeField(obj map[string]any, key string, out any) error {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil
	}
	b, done, err := marshalScratch(v)
	if err != nil {
		return err
	}
	defer done()
	return json.Unmarshal(b, out)
}
