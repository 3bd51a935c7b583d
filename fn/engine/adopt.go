package engine

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// Adoption of the generation the original operator serves, for an engine
// claim a migration made (kubectl firebolt migrate): the live objects of
// that generation become its recorded rendering, so Crossplane re-applies
// exactly what runs and no pod restarts. docs/migration.md.

// Requirements for the three objects of the generation adopted, asked for
// only on the first calls, before the engine has a phase.
const (
	RequirementAdoptStatefulSet = "adopt-statefulset"
	RequirementAdoptHeadless    = "adopt-headless"
	RequirementAdoptConfig      = "adopt-config"
)

var adoptRequirement = map[string]string{
	suffixStatefulSet: RequirementAdoptStatefulSet,
	suffixHeadless:    RequirementAdoptHeadless,
	suffixConfig:      RequirementAdoptConfig,
}

// ReasonAdoptionFailed is EngineReady's reason while the claim asks to
// adopt a generation of the original operator that cannot be adopted.
const ReasonAdoptionFailed = "AdoptionFailed"

// Adoption is what a migrated claim asks to adopt, and what Crossplane
// found of it.
type Adoption struct {
	// Asked: the composite carries the annotation and the engine has no
	// phase yet (one that has rendered or adopted its first generation
	// already). The zero Adoption asks nothing.
	Asked bool
	// Generation is the generation to adopt, when Err is empty.
	Generation int
	// Err says why the annotation cannot be used.
	Err string
	// Resolved: Crossplane has looked for every object.
	Resolved bool
	// Live are the objects found, by suffix, as the API server has them.
	Live map[string]*unstructured.Unstructured
}

// readAdoption reads the adoption annotation, and the live objects once
// Crossplane has fetched them. Only an engine without a phase adopts: one
// that has one rendered or adopted its first generation already.
func readAdoption(c composite.Call, in Inputs) (Adoption, error) {
	var a Adoption
	v, ok := c.XR.Resource.GetAnnotations()[contract.AnnotationAdoptGeneration]
	if !ok || in.Status.Phase != "" || in.Engine == "" || in.Namespace == "" {
		return a, nil
	}
	a.Asked = true
	g, convErr := strconv.Atoi(v)
	if valid := convErr == nil && g >= 0 && g <= v1alpha1.MaxGeneration && strconv.Itoa(g) == v; !valid {
		a.Err = fmt.Sprintf("annotation %s is %q: it must be the generation the original operator serves, a number from 0 to %d",
			contract.AnnotationAdoptGeneration, BoundMessage(v), v1alpha1.MaxGeneration)
		return a, nil
	}
	a.Generation, a.Resolved, a.Live = g, true, map[string]*unstructured.Unstructured{}
	for _, s := range generationSuffixes {
		id := generationIdentity(in.Engine, in.Namespace, g, s)
		u, resolved, err := composite.RequiredNamed(c.Req, adoptRequirement[s], id.Kind, id.Name)
		if err != nil {
			return Adoption{}, err
		}
		a.Resolved = a.Resolved && resolved
		if u != nil {
			a.Live[s] = u
		}
	}
	return a, nil
}

// adoptRequirements asks for the objects of the generation adopted.
func adoptRequirements(in Inputs, r map[string]Requirement) {
	if !in.Adopt.Asked || in.Adopt.Err != "" {
		return
	}
	for _, s := range generationSuffixes {
		id := generationIdentity(in.Engine, in.Namespace, in.Adopt.Generation, s)
		r[adoptRequirement[s]] = Requirement{APIVersion: id.APIVersion, Kind: id.Kind, Name: id.Name, Namespace: in.Namespace}
	}
}

// adoptedObjects are the live objects as a rendering: what the original
// applied, without what the API server and the controllers add
// (composite.Unchanged), labelled with the generation's own labels, which
// the original sets and a rendering carries; a live object without them
// is not the original's.
func adoptedObjects(engine, namespace string, gen int, live map[string]*unstructured.Unstructured) (GenerationObjects, string) {
	var objs GenerationObjects
	for _, s := range generationSuffixes {
		id := generationIdentity(engine, namespace, gen, s)
		u := live[s]
		if u == nil {
			return GenerationObjects{}, fmt.Sprintf("%s %s/%s not found: the original's generation %d is gone", id.Kind, namespace, id.Name, gen)
		}
		labels := u.GetLabels()
		for k, v := range id.Labels {
			if labels[k] != v {
				return GenerationObjects{}, fmt.Sprintf("%s %s/%s has label %s=%q, want %q: it is not the original's generation %d",
					id.Kind, namespace, id.Name, k, BoundMessage(labels[k]), v, gen)
			}
		}
		obj := &unstructured.Unstructured{Object: composite.Unchanged(u.Object)}
		obj.SetLabels(id.Labels)
		switch s {
		case suffixStatefulSet:
			objs.StatefulSet = obj.Object
		case suffixHeadless:
			objs.Headless = obj.Object
		case suffixConfig:
			objs.ConfigMap = obj.Object
		}
	}
	return objs, ""
}

// adopt is the first call of a migrated engine: instead of rendering a
// first generation, it records the generation the original serves, as it
// runs, as that generation's rendering, and moves to creating it, which
// applies it (a no-op on the live objects), waits for its pods and points
// the routing Service at it, as for any generation. Beside the recording
// it keeps the hash this function renders for the spec (AdoptedHash):
// while the spec renders that, the adopted generation is in effect, and
// the next change rolls a new generation in the usual way.
func (m *machine) adopt() {
	a := m.in.Adopt
	// Nothing is emitted and the phase stays empty until the recording is
	// written: the engine has no generation of its own yet.
	m.next.ActiveGeneration = -1
	m.ttl = ttlGated
	switch {
	case a.Err != "":
		m.adoptionFailed = a.Err
		return
	case !a.Resolved:
		// Crossplane calls again with the objects.
		m.ttl = ttlProgress
		return
	case !m.canRender():
		// The hash of what the spec renders needs the instance and the
		// class; the gating conditions say what is awaited.
		return
	}
	objs, why := adoptedObjects(m.in.Engine, m.in.Namespace, a.Generation, a.Live)
	if why != "" {
		m.adoptionFailed = why + "; to start afresh instead, remove the annotation " + contract.AnnotationAdoptGeneration + " from the claim"
		return
	}
	rec := record(a.Generation, objs)
	if err := verifyRecording(m.in.Engine, m.in.Namespace, m.in.Config.PodSecurity, rec); err != nil {
		m.adoptionFailed = fmt.Sprintf("the original's generation %d cannot be adopted: %v", a.Generation, err)
		return
	}
	rec = rec.encoded()
	if n := len(rec.Encoded); n > maxStatusRecordingBytes {
		m.adoptionFailed = fmt.Sprintf("the original's generation %d is %d bytes encoded, more than the %d a recording holds", a.Generation, n, maxStatusRecordingBytes)
		return
	}
	rec.AdoptedHash = renderedHash(m.renderInput(a.Generation))
	m.recorded[a.Generation] = rec
	m.next.CurrentGeneration = a.Generation
	m.next.Phase = v1alpha1.EnginePhaseCreating
	m.event("Adopted", fmt.Sprintf("Adopted generation %d of the original operator as it runs (StatefulSet %s, Service %s, ConfigMap %s); the next spec change rolls a new generation",
		a.Generation, statefulSetName(m.in.Engine, a.Generation), headlessName(m.in.Engine, a.Generation), configMapName(m.in.Engine, a.Generation)))
	m.ttl = ttlProgress
}

// maxStatusRecordingBytes is the schema's MaxLength of a recording's
// objects in status.renderings.
const maxStatusRecordingBytes = 262144
