package engine

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/fn/composite"
	"github.com/firebolt-db/firebolt-crossplane/fn/podtemplate"
)

// identity is what one of a generation's objects must be: its type, its
// name and place, and its labels. It is derived from the engine, the
// generation and the suffix with the renderer's own name and label
// helpers, so it cannot drift from what is rendered.
type identity struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
	Labels     map[string]string
}

func generationIdentity(engine, namespace string, gen int, suffix string) identity {
	id := identity{Namespace: namespace, Labels: generationLabels(engine, gen)}
	switch suffix {
	case suffixConfig:
		id.APIVersion, id.Kind, id.Name = "v1", kindConfigMap, configMapName(engine, gen)
	case suffixHeadless:
		id.APIVersion, id.Kind, id.Name = "v1", "Service", headlessName(engine, gen)
	case suffixStatefulSet:
		id.APIVersion, id.Kind, id.Name = "apps/v1", "StatefulSet", statefulSetName(engine, gen)
	}
	return id
}

// verifyRecording accepts a decoded recording only if replaying it cannot
// do more than re-apply what this engine's generation would have been:
// every object has its generation's kind, name, namespace and labels, the
// StatefulSet and the headless Service select exactly the generation's pods,
// its pods ask for nothing the function would refuse to render under the
// pod-security allow-list ps, and the hash is the hash of the content.
// Whoever can write the composite's status must not be able to make
// Crossplane apply another object, adopt another engine's pods, or run a
// privileged pod under a generation's name.
func verifyRecording(engine, namespace string, ps v1beta1.PodSecurity, r Recording) error {
	if engine == "" || namespace == "" {
		return errors.New("the composite has no claim labels to verify it against")
	}
	for _, s := range generationSuffixes {
		if err := verifyIdentity(r.Objects.bySuffix(s), generationIdentity(engine, namespace, r.Generation, s)); err != nil {
			return errors.Wrapf(err, "%s object", s)
		}
	}
	want := generationLabels(engine, r.Generation)
	sts, svc := r.Objects.StatefulSet, r.Objects.Headless
	if sel, _, _ := unstructured.NestedStringMap(sts, "spec", "selector", "matchLabels"); !reflect.DeepEqual(sel, want) {
		return errors.Errorf("statefulset selector %v, want %v", sel, want)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(sts, "spec", "selector", "matchExpressions"); ok {
		return errors.New("statefulset selector has matchExpressions")
	}
	tpl, _, _ := unstructured.NestedStringMap(sts, "spec", "template", "metadata", "labels")
	for k, v := range want {
		if tpl[k] != v {
			return errors.Errorf("statefulset pod template label %s is %q, want %q", k, tpl[k], v)
		}
	}
	if sn, _, _ := unstructured.NestedString(sts, "spec", "serviceName"); sn != headlessName(engine, r.Generation) {
		return errors.Errorf("statefulset serviceName %q, want %q", sn, headlessName(engine, r.Generation))
	}
	if sel, _, _ := unstructured.NestedStringMap(svc, "spec", "selector"); !reflect.DeepEqual(sel, want) {
		return errors.Errorf("headless selector %v, want %v", sel, want)
	}
	typ, _, _ := unstructured.NestedString(svc, "spec", "type")
	ip, _, _ := unstructured.NestedString(svc, "spec", "clusterIP")
	if typ != "ClusterIP" || ip != "None" {
		return errors.Errorf("headless Service is type %q with clusterIP %q, want a headless ClusterIP Service", typ, ip)
	}
	if err := verifyPodTemplate(sts, ps); err != nil {
		return err
	}
	if got := record(r.Generation, r.Objects).Hash; got != r.Hash {
		return errors.Errorf("recorded hash %q does not match its content, which hashes to %q", r.Hash, got)
	}
	return nil
}

// verifyPodTemplate applies to a recorded StatefulSet's pods the checks a
// rendered pod passes.
func verifyPodTemplate(sts map[string]any, ps v1beta1.PodSecurity) error {
	raw, _, _ := unstructured.NestedMap(sts, "spec", "template")
	tpl := &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, tpl); err != nil {
		return errors.Wrap(err, "cannot decode the statefulset pod template")
	}
	if errs := podtemplate.CheckRendered(tpl, ps, field.NewPath("spec", "template")); len(errs) > 0 {
		return errors.Wrap(errs.ToAggregate(), "statefulset pod template")
	}
	return nil
}

func verifyIdentity(obj map[string]any, want identity) error {
	u := unstructured.Unstructured{Object: obj}
	if u.GetAPIVersion() != want.APIVersion || u.GetKind() != want.Kind {
		return errors.Errorf("is %s %s, want %s %s", u.GetAPIVersion(), u.GetKind(), want.APIVersion, want.Kind)
	}
	if u.GetNamespace() != want.Namespace || u.GetName() != want.Name {
		return errors.Errorf("is %s/%s, want %s/%s", u.GetNamespace(), u.GetName(), want.Namespace, want.Name)
	}
	if l := u.GetLabels(); !reflect.DeepEqual(l, want.Labels) {
		return errors.Errorf("has labels %v, want %v", l, want.Labels)
	}
	if k := composite.ForeignMetadata(obj); k != "" {
		return errors.Errorf("sets metadata.%s, which no rendering sets", k)
	}
	return nil
}

// rejectedRecordings describes the recordings of status.renderings that
// were rejected, by generation, or "" when none was.
func rejectedRecordings(rs map[int]Recording) string {
	var gens []int
	for g, r := range rs {
		if r.Err != nil {
			gens = append(gens, g)
		}
	}
	if len(gens) == 0 {
		return ""
	}
	sort.Ints(gens)
	parts := make([]string, 0, len(gens))
	for _, g := range gens {
		parts = append(parts, fmt.Sprintf("generation %d: %v", g, rs[g].Err))
	}
	return BoundMessage("rejected the recorded rendering of " + strings.Join(parts, "; ") +
		"; a rejected generation is treated as having no recording: its live objects are kept as observed, never replayed from status")
}
