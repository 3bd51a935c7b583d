package instance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// Adoption of the original operator's components, for an instance claim a
// migration made (kubectl firebolt migrate): the workloads whose pods a
// different template would restart, and the ConfigMaps those pods read
// when they start, are applied as they ran until the spec changes.
// docs/migration.md.

// adoptable is one object a migrated instance keeps as it ran.
type adoptable struct {
	rn         resource.Name
	apiVersion string
	kind       string
	name       func(names) string
	component  component
	// workload: it has a pod template and a selector.
	workload bool
}

// The types of what is adopted.
const (
	adoptAppsV1      = "apps/v1"
	adoptConfigMap   = "ConfigMap"
	adoptDeployment  = "Deployment"
	adoptStatefulSet = "StatefulSet"
)

var adoptables = []adoptable{
	{RNPostgres, adoptAppsV1, adoptStatefulSet, names.postgres, componentPostgres, true},
	{RNMetadataConfig, "v1", adoptConfigMap, names.metadataConfig, componentMetadata, false},
	{RNMetadata, adoptAppsV1, adoptDeployment, names.metadata, componentMetadata, true},
	{RNGatewayConfig, "v1", adoptConfigMap, names.gatewayConfig, componentGateway, false},
	{RNGateway, adoptAppsV1, adoptDeployment, names.gateway, componentGateway, true},
}

// reqAdopt is the requirement name for an adoptable's live object.
func reqAdopt(rn resource.Name) string { return "adopt-" + string(rn) }

// Bounds of status.adopted: five objects of a few KiB each; the bounds
// only stop a corrupted or hostile status from exhausting memory.
const (
	maxAdoptedEncoded = 262144
	maxAdoptedBytes   = 4 << 20
)

// Adoption is what a migrated instance adopts.
type Adoption struct {
	// Asked: the claim was made by a migration and nothing is adopted or
	// composed yet, so the live objects are asked for.
	Asked bool
	// Resolved: Crossplane has looked for every live object.
	Resolved bool
	// Live are the objects found, by resource name.
	Live map[resource.Name]*unstructured.Unstructured
	// Recorded are status.adopted's objects, decoded and checked; Err says
	// why they cannot be trusted.
	Recorded map[resource.Name]map[string]any
	Err      string
}

// readAdoption reads status.adopted, or, for a migrated claim that has
// not adopted yet, the live objects Crossplane fetched.
func readAdoption(req *fnv1.RunFunctionRequest, in Inputs, ps v1beta1.PodSecurity) (Adoption, error) {
	var a Adoption
	n := names{instance: in.Claim, namespace: in.Namespace}
	if rec := in.XR.Status.Adopted; rec != nil {
		objs, err := decodeAdopted(n, rec.Objects, ps)
		if err != nil {
			a.Err = err.Error()
		}
		a.Recorded = objs
		return a, nil
	}
	// Until a composition of this instance has been written in full
	// (status.composedGeneration), what runs is the original's, even
	// where Crossplane observes it already: a first apply cut short by an
	// error writes the references (contract.AdoptedNames) but no status.
	if in.XR.GetAnnotations()[contract.AnnotationMigratedFrom] != contract.MigratedFromOriginal || in.XR.Status.ComposedGeneration != 0 {
		return a, nil
	}
	a.Asked, a.Resolved, a.Live = true, true, map[resource.Name]*unstructured.Unstructured{}
	for _, ad := range adoptables {
		u, resolved, err := composite.RequiredNamed(req, reqAdopt(ad.rn), ad.kind, ad.name(n))
		if err != nil {
			return Adoption{}, err
		}
		a.Resolved = a.Resolved && resolved
		if u != nil {
			a.Live[ad.rn] = u
		}
	}
	return a, nil
}

// adoptRequirements asks for the live objects while they are asked.
func (c *computation) adoptRequirements() {
	if !c.in.Adoption.Asked {
		return
	}
	ns := c.n.namespace
	for _, ad := range adoptables {
		c.plan.Requirements[reqAdopt(ad.rn)] = &fnv1.ResourceSelector{
			ApiVersion: ad.apiVersion, Kind: ad.kind, Namespace: &ns,
			Match: &fnv1.ResourceSelector_MatchName{MatchName: ad.name(c.n)},
		}
	}
}

// checkAdoptable accepts obj as ad's object only if applying it cannot do
// more than keep this instance's component running as it does: its kind,
// name and place, a selector of the component's pods alone, and pods that
// ask for nothing the pod-security allow-list refuses. Whoever can write
// the composite's status must not make Crossplane run another workload.
func checkAdoptable(n names, ad adoptable, obj map[string]any, ps v1beta1.PodSecurity) error {
	u := unstructured.Unstructured{Object: obj}
	if u.GetAPIVersion() != ad.apiVersion || u.GetKind() != ad.kind || u.GetName() != ad.name(n) || u.GetNamespace() != n.namespace {
		return errors.Errorf("%s is %s %s %s/%s, want %s %s %s/%s", ad.rn, u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName(),
			ad.apiVersion, ad.kind, n.namespace, ad.name(n))
	}
	if l := u.GetLabels(); l[LabelInstance] != n.instance {
		return errors.Errorf("%s %s has label %s=%q, want %q", ad.kind, u.GetName(), LabelInstance, l[LabelInstance], n.instance)
	}
	if k := composite.ForeignMetadata(obj); k != "" {
		return errors.Errorf("%s %s sets metadata.%s", ad.kind, u.GetName(), k)
	}
	if !ad.workload {
		return nil
	}
	sel, _, _ := unstructured.NestedStringMap(obj, "spec", "selector", "matchLabels")
	if sel[LabelInstance] != n.instance || sel[LabelComponent] != string(ad.component) {
		return errors.Errorf("%s %s selects %v, not the %s pods of instance %s", ad.kind, u.GetName(), sel, ad.component, n.instance)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(obj, "spec", "selector", "matchExpressions"); ok {
		return errors.Errorf("%s %s selects with matchExpressions", ad.kind, u.GetName())
	}
	raw, _, _ := unstructured.NestedMap(obj, "spec", "template")
	tpl := &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, tpl); err != nil {
		return errors.Wrapf(err, "cannot decode the pod template of %s %s", ad.kind, u.GetName())
	}
	for k, v := range sel {
		if tpl.Labels[k] != v {
			return errors.Errorf("%s %s's pods are not labelled %s=%q, which it selects", ad.kind, u.GetName(), k, v)
		}
	}
	if errs := podtemplate.CheckRendered(tpl, ps, field.NewPath("spec", "template")); len(errs) > 0 {
		return errors.Wrapf(errs.ToAggregate(), "%s %s", ad.kind, u.GetName())
	}
	return nil
}

// decodeAdopted reverses encodeAdopted and checks every object.
func decodeAdopted(n names, s string, ps v1beta1.PodSecurity) (map[resource.Name]map[string]any, error) {
	b, err := composite.Unpack(s, "adopted objects", maxAdoptedEncoded, maxAdoptedBytes)
	if err != nil {
		return nil, err
	}
	var objs map[resource.Name]map[string]any
	if err := json.Unmarshal(b, &objs); err != nil {
		return nil, errors.Wrap(err, "cannot parse the adopted objects")
	}
	for rn, obj := range objs {
		ad, ok := adoptableOf(rn)
		if !ok {
			return nil, errors.Errorf("%q is not an object an instance adopts", rn)
		}
		if err := checkAdoptable(n, ad, obj, ps); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

func adoptableOf(rn resource.Name) (adoptable, bool) {
	for _, ad := range adoptables {
		if ad.rn == rn {
			return ad, true
		}
	}
	return adoptable{}, false
}

// specHash identifies the spec the components were adopted under.
func specHash(spec v1alpha1.FireboltInstanceSpec) string {
	b, err := json.Marshal(spec)
	if err != nil {
		// Decoded from JSON; failing to encode it again is a bug.
		panic("instance: cannot encode spec: " + err.Error())
	}
	return partsHash(string(b))
}

// adopt applies what was adopted instead of what this call rendered:
// while a migrated claim's live objects are still being fetched, none of
// them is applied (a rendering applied now would restart the original's
// pods); once fetched, they are recorded in status.adopted with the hash
// of the spec; from then on they are applied as recorded until the spec
// changes, after which the components are rendered from it as always.
func (c *computation) adopt() {
	a, spec := c.in.Adoption, c.in.XR.Spec
	var objs map[resource.Name]map[string]any
	switch {
	case a.Asked && !a.Resolved:
		for _, ad := range adoptables {
			delete(c.plan.Resources, ad.rn)
		}
		c.plan.Ready = false
		// Not composed in full: the next call still asks (readAdoption).
		c.holdComposed = true
		return
	case a.Asked:
		objs = c.adoptLive()
		if len(objs) == 0 {
			return
		}
		b, err := json.Marshal(objs)
		if err != nil {
			panic("instance: cannot encode adopted objects: " + err.Error())
		}
		c.plan.Status.Adopted = &v1alpha1.AdoptedComponents{SpecHash: specHash(spec), Objects: composite.Pack(b)}
		c.plan.Results = append(c.plan.Results, Result{Severity: composite.SeverityNormal, Reason: "Adopted", Message: composite.BoundMessage(
			"Adopted from the original operator as they run: " + adoptedNames(objs) + "; the next spec change renders them")})
	case a.Err != "":
		c.plan.Results = append(c.plan.Results, Result{Severity: composite.SeverityWarning, Reason: "AdoptionRejected", Message: composite.BoundMessage(
			"status.adopted cannot be trusted and is dropped; the components are rendered from the spec: " + a.Err)})
		return
	case a.Recorded != nil && c.in.XR.Status.Adopted.SpecHash == specHash(spec):
		objs = a.Recorded
		c.plan.Status.Adopted = c.in.XR.Status.Adopted
	case a.Recorded != nil:
		c.plan.Results = append(c.plan.Results, Result{Severity: composite.SeverityNormal, Reason: "AdoptionEnded",
			Message: "The spec changed: the components adopted from the original operator are rendered from it now"})
		return
	default:
		return
	}
	for rn, obj := range objs {
		if _, rendered := c.plan.Resources[rn]; rendered {
			c.plan.Resources[rn] = Desired{Object: runtime.DeepCopyJSON(obj), Ready: resourceReady(c.in.Observed[rn])}
		}
	}
}

// adoptLive is the live objects that can be adopted, as desired state;
// one that cannot is rendered instead, and a Warning says why.
func (c *computation) adoptLive() map[resource.Name]map[string]any {
	objs := map[resource.Name]map[string]any{}
	for _, ad := range adoptables {
		u := c.in.Adoption.Live[ad.rn]
		if u == nil {
			continue
		}
		obj := composite.Unchanged(u.Object)
		if err := checkAdoptable(c.n, ad, obj, c.cfg.PodSecurity); err != nil {
			c.plan.Results = append(c.plan.Results, Result{Severity: composite.SeverityWarning, Reason: "AdoptionRefused", Message: composite.BoundMessage(
				fmt.Sprintf("%s %s is rendered instead of adopted (its pods restart): %v", ad.kind, ad.name(c.n), err))})
			continue
		}
		objs[ad.rn] = obj
	}
	return objs
}

func adoptedNames(objs map[resource.Name]map[string]any) string {
	out := make([]string, 0, len(objs))
	for _, obj := range objs {
		u := unstructured.Unstructured{Object: obj}
		out = append(out, u.GetKind()+" "+u.GetName())
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
