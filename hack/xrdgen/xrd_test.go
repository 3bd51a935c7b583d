package main

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	xv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

func names(kind, plural, short string) extv1.CustomResourceDefinitionNames {
	return extv1.CustomResourceDefinitionNames{
		Kind: kind, ListKind: kind + "List", Plural: plural, Singular: plural[:len(plural)-1],
		ShortNames: []string{short}, Categories: []string{"firebolt"},
	}
}

func obj(props map[string]extv1.JSONSchemaProps) extv1.JSONSchemaProps {
	return extv1.JSONSchemaProps{Type: "object", Properties: props}
}

func TestForCRD(t *testing.T) {
	spec := obj(map[string]extv1.JSONSchemaProps{"size": {Type: "integer"}})
	status := obj(map[string]extv1.JSONSchemaProps{"phase": {Type: "string"}})
	cols := []extv1.CustomResourceColumnDefinition{{Name: "SIZE", Type: "integer", JSONPath: ".spec.size"}}
	crd := func(kind, plural, short string) *extv1.CustomResourceDefinition {
		return &extv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".compute.firebolt.io"},
			Spec: extv1.CustomResourceDefinitionSpec{
				Group: "compute.firebolt.io",
				Names: names(kind, plural, short),
				Scope: extv1.ClusterScoped,
				Versions: []extv1.CustomResourceDefinitionVersion{{
					Name: "v1alpha1", Served: true, Storage: true, AdditionalPrinterColumns: cols,
					Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{
						Type: "object", Description: "A thing.", Required: []string{"spec"},
						Properties: map[string]extv1.JSONSchemaProps{
							"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
							"spec": spec, "status": status,
						},
					}},
				}},
			},
		}
	}
	schema, err := json.Marshal(extv1.JSONSchemaProps{
		Type: "object", Description: "A thing.", Required: []string{"spec"},
		Properties: map[string]extv1.JSONSchemaProps{"spec": spec, "status": status},
	})
	if err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		reason string
		crd    *extv1.CustomResourceDefinition
		want   *xv1.CompositeResourceDefinition
		err    string
	}{
		"Composite": {
			reason: "A composite kind becomes a LegacyCluster XRD offering the claim without the X, with spec and status only.",
			crd:    crd("XThing", "xthings", "xthg"),
			want: &xv1.CompositeResourceDefinition{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.crossplane.io/v1", Kind: "CompositeResourceDefinition"},
				ObjectMeta: metav1.ObjectMeta{Name: "xthings.compute.firebolt.io"},
				Spec: xv1.CompositeResourceDefinitionSpec{
					Group:                 "compute.firebolt.io",
					Names:                 names("XThing", "xthings", "xthg"),
					Scope:                 ptr.To(xv1.CompositeResourceScopeLegacyCluster),
					ClaimNames:            ptr.To(names("Thing", "things", "thg")),
					DefaultCompositionRef: &xv1.CompositionReference{Name: "xthings.compute.firebolt.io"},
					Versions: []xv1.CompositeResourceDefinitionVersion{{
						Name: "v1alpha1", Served: true, Referenceable: true, AdditionalPrinterColumns: cols,
						Schema: &xv1.CompositeResourceValidation{OpenAPIV3Schema: runtime.RawExtension{Raw: schema}},
					}},
				},
			},
		},
		"NotComposite": {
			reason: "A kind without the X prefix has no claim name to derive.",
			crd:    crd("Thing", "things", "thg"),
			err:    `composite kind "Thing" must start with "X"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ForCRD(tc.crd)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.err, gotErr); diff != "" {
				t.Errorf("%s\nForCRD(): -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nForCRD(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func podTemplate() extv1.JSONSchemaProps {
	container := obj(map[string]extv1.JSONSchemaProps{"name": {Type: "string", Description: "Name."}})
	container.Required = []string{"name"}
	podSpec := obj(map[string]extv1.JSONSchemaProps{
		"containers":     {Type: "array", Description: "Containers.", Items: &extv1.JSONSchemaPropsOrArray{Schema: &container}},
		"initContainers": {Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &container}},
	})
	podSpec.Required = []string{"containers"}
	podSpec.Description = "PodSpec."
	t := obj(map[string]extv1.JSONSchemaProps{"metadata": {Type: "object", Description: "Meta."}, "spec": podSpec})
	t.Description = "Our template."
	return t
}

func TestPatchTemplates(t *testing.T) {
	site := v1alpha1.TemplateSite{Path: "spec.template", Primary: "main"}
	cases := map[string]struct {
		reason string
		root   extv1.JSONSchemaProps
		sites  []v1alpha1.TemplateSite
		err    string
	}{
		"Unlisted": {
			reason: "A pod template missing from the sites would escape the rules.",
			root:   obj(map[string]extv1.JSONSchemaProps{"spec": obj(map[string]extv1.JSONSchemaProps{"template": podTemplate(), "other": podTemplate()})}),
			sites:  []v1alpha1.TemplateSite{site},
			err:    "pod templates without operator-owned path rules in v1alpha1.TemplateSites: spec.other",
		},
		"Missing": {
			reason: "A site must point at a pod template.",
			root:   obj(map[string]extv1.JSONSchemaProps{"spec": obj(map[string]extv1.JSONSchemaProps{})}),
			sites:  []v1alpha1.TemplateSite{site},
			err:    "no pod template at spec.template",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := PatchTemplates(&tc.root, tc.sites)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.err, gotErr); diff != "" {
				t.Errorf("%s\nPatchTemplates(): -want error, +got error:\n%s", tc.reason, diff)
			}
		})
	}

	t.Run("Patched", func(t *testing.T) {
		root := obj(map[string]extv1.JSONSchemaProps{"spec": obj(map[string]extv1.JSONSchemaProps{"template": podTemplate()})})
		if err := PatchTemplates(&root, []v1alpha1.TemplateSite{site}); err != nil {
			t.Fatal(err)
		}
		got := root.Properties["spec"].Properties["template"]
		gotRules := takeRules(&got, "")

		// Our description of the template stays; upstream ones below go.
		want := podTemplate()
		want.Properties["metadata"] = templateMetadata()
		spec := want.Properties["spec"]
		spec.Description = ""
		spec.Required = nil
		for _, l := range []string{"containers", "initContainers"} {
			p := spec.Properties[l]
			p.Description = ""
			p.MaxItems = ptr.To(int64(v1alpha1.MaxTemplateContainers))
			c := *p.Items.Schema
			c.Properties = map[string]extv1.JSONSchemaProps{"name": {Type: "string"}}
			p.Items = &extv1.JSONSchemaPropsOrArray{Schema: &c}
			spec.Properties[l] = p
		}
		want.Properties["spec"] = spec
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("PatchTemplates() without rules: -want, +got:\n%s", diff)
		}

		rules := site.Rules()
		wantRules := make([]string, 0, len(rules))
		for _, r := range rules {
			wantRules = append(wantRules, r.At+": "+r.Rule+": "+r.Message)
		}
		sort.Strings(wantRules)
		if diff := cmp.Diff(wantRules, gotRules); diff != "" {
			t.Errorf("PatchTemplates() rules: -want, +got:\n%s", diff)
		}
	})
}

// takeRules removes the CEL rules from s's subtree and returns them as
// "node: rule: message", sorted.
func takeRules(s *extv1.JSONSchemaProps, path string) []string {
	out := make([]string, 0, len(s.XValidations))
	for _, r := range s.XValidations {
		out = append(out, path+": "+r.Rule+": "+r.Message)
	}
	s.XValidations = nil
	for name, p := range s.Properties {
		sub := name
		if path != "" {
			sub = path + "." + name
		}
		out = append(out, takeRules(&p, sub)...)
		s.Properties[name] = p
	}
	sort.Strings(out)
	return out
}
