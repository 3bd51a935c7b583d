package engine

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// nameProblems renders every object an engine of this name composes, at
// the largest generation number and the largest replica count, and lists
// every name or label value Kubernetes would refuse, including those the
// StatefulSet controller derives: the pods and their labels.
func nameProblems(t *testing.T, engine string) []string {
	t.Helper()
	ns := strings.Repeat("n", validation.DNS1123LabelMaxLength)
	in := testInputs(t, v1alpha1.EnginePhaseStable, v1alpha1.MaxGeneration, v1alpha1.MaxGeneration)
	in.Engine, in.Namespace = engine, ns
	in.Spec.Replicas = v1alpha1.MaxEngineReplicas
	gen := v1alpha1.MaxGeneration
	objs := renderFor(in, gen, in.Spec).Objects

	var problems []string
	check := func(what, value string, errs []string) {
		for _, e := range errs {
			problems = append(problems, fmt.Sprintf("%s %q: %s", what, value, e))
		}
	}
	labels := func(kind string, obj map[string]any, paths ...[]string) {
		for _, p := range paths {
			m, _, _ := unstructured.NestedStringMap(obj, p...)
			for k, v := range m {
				check(kind+" label "+k+" at "+strings.Join(p, "."), v, validation.IsValidLabelValue(v))
			}
		}
	}
	meta := []string{"metadata", "labels"}

	sts := (&unstructured.Unstructured{Object: objs.StatefulSet}).GetName()
	check("StatefulSet", sts, validation.IsDNS1123Subdomain(sts))
	labels("StatefulSet", objs.StatefulSet, meta, []string{"spec", "selector", "matchLabels"}, []string{"spec", "template", "metadata", "labels"})
	// The StatefulSet controller labels its pods and ControllerRevisions
	// controller-revision-hash=<statefulset>-<hash of up to 10 characters>.
	revision := sts + "-" + strings.Repeat("h", 10)
	check("controller-revision-hash label", revision, validation.IsValidLabelValue(revision))
	pod := sts + "-" + strconv.Itoa(v1alpha1.MaxEngineReplicas-1)
	check("pod (its hostname and statefulset.kubernetes.io/pod-name label)", pod, append(validation.IsDNS1123Label(pod), validation.IsValidLabelValue(pod)...))

	hl := (&unstructured.Unstructured{Object: objs.Headless}).GetName()
	check("headless Service", hl, validation.IsDNS1035Label(hl))
	labels("headless Service", objs.Headless, meta, []string{"spec", "selector"})
	check("pod FQDN", pod+"."+hl+"."+ns+".svc.cluster.local", validation.IsDNS1123Subdomain(pod+"."+hl+"."+ns+".svc.cluster.local"))

	cm := (&unstructured.Unstructured{Object: objs.ConfigMap}).GetName()
	check("ConfigMap", cm, validation.IsDNS1123Subdomain(cm))
	labels("ConfigMap", objs.ConfigMap, meta)

	svc := RenderRoutingService(Routing{Engine: engine, Namespace: ns, Gen: gen, Instance: strings.Repeat("i", v1alpha1.MaxInstanceNameLength), ObservedAuthHash: "0123456789abcdef"})
	name := (&unstructured.Unstructured{Object: svc}).GetName()
	check("routing Service", name, validation.IsDNS1035Label(name))
	labels("routing Service", svc, meta, []string{"spec", "selector"})

	b := Binding(ns, engine, strings.Repeat("c", validation.DNS1123LabelMaxLength))
	check("class binding", b.GetName(), validation.IsDNS1123Subdomain(b.GetName()))
	labels("class binding", b.Object, meta)
	return problems
}

// TestEngineNameLimitIsExact shows that v1alpha1.MaxEngineNameLength is
// exact: every object an engine of that many characters composes, at any
// generation it can reach, is valid; one character more and one is not.
func TestEngineNameLimitIsExact(t *testing.T) {
	longest := strings.Repeat("e", v1alpha1.MaxEngineNameLength)
	if diff := cmp.Diff([]string(nil), nameProblems(t, longest)); diff != "" {
		t.Errorf("engine name of %d characters: -want no problems, +got:\n%s", len(longest), diff)
	}
	tooLong := longest + "e"
	got := nameProblems(t, tooLong)
	want := []string{fmt.Sprintf("controller-revision-hash label %q: must be no more than 63 bytes", tooLong+"-g999-hhhhhhhhhh")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("engine name of %d characters: -want, +got:\n%s", len(tooLong), diff)
	}
}

// TestValidateLimits is the function's own refusal, for a composite that
// did not come through the claim's admission.
func TestValidateLimits(t *testing.T) {
	longest := strings.Repeat("e", v1alpha1.MaxEngineNameLength)
	cases := map[string]struct {
		engine   string
		replicas int32
		want     *rejection
	}{
		"WithinTheLimits": {engine: longest, replicas: v1alpha1.MaxEngineReplicas},
		"NameTooLong": {
			engine: longest + "e", replicas: 1,
			want: &rejection{Reason: ReasonLimitExceeded, Message: `metadata.name: Invalid value: "` + longest + `e": a FireboltEngine name may be at most 47 characters: its StatefulSets <name>-g<generation> (generations 0-999) must fit in 52 characters`},
		},
		"NameNotADNSLabel": {
			engine: "1st.engine", replicas: 1,
			want: &rejection{Reason: ReasonLimitExceeded, Message: `metadata.name: Invalid value: "1st.engine": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`},
		},
		"TooManyReplicas": {
			engine: "demo", replicas: v1alpha1.MaxEngineReplicas + 1,
			want: &rejection{Reason: ReasonLimitExceeded, Message: `spec.replicas: Invalid value: 1001: must be less than or equal to 1000: every node is listed in the engine's ConfigMap`},
		},
		"NegativeReplicas": {
			engine: "demo", replicas: -1,
			want: &rejection{Reason: ReasonLimitExceeded, Message: `spec.replicas: Invalid value: -1: must be greater than or equal to 0`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := testInputs(t, v1alpha1.EnginePhaseStable, 0, 0)
			in.Engine, in.Spec.Replicas = tc.engine, tc.replicas
			if diff := cmp.Diff(tc.want, validateLimits(in), cmp.AllowUnexported(rejection{})); diff != "" {
				t.Errorf("validateLimits(...): -want, +got:\n%s", diff)
			}
		})
	}
}
