package podtemplate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// TestOriginalExamplesPassThePolicy runs the function's template checks,
// with the default input, over every pod template of our fixtures that set
// the same fields as the original operator's examples
// (apis/testdata/original-shapes): the pod-template policy, ServiceAccounts
// included, must refuse none of them.
func TestOriginalExamplesPassThePolicy(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "apis", "testdata", "original-shapes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no original-shape fixtures: %v", err)
	}
	templates := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			var meta struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatal(err)
			}
			type site struct {
				tpl   *corev1.PodTemplateSpec
				rules Rules
				path  *field.Path
			}
			var sites []site
			switch meta.Kind {
			case "FireboltEngine":
				var e v1alpha1.XFireboltEngine
				if err := yaml.UnmarshalStrict(doc, &e); err != nil {
					t.Fatal(err)
				}
				sites = []site{{e.Spec.Template, EngineRules, field.NewPath("spec", "template")}}
			case "FireboltEngineClass":
				var c v1alpha1.XFireboltEngineClass
				if err := yaml.UnmarshalStrict(doc, &c); err != nil {
					t.Fatal(err)
				}
				sites = []site{{&c.Spec.Template, EngineRules, field.NewPath("spec", "template")}}
			case "FireboltInstance":
				var i v1alpha1.XFireboltInstance
				if err := yaml.UnmarshalStrict(doc, &i); err != nil {
					t.Fatal(err)
				}
				sites = []site{
					{i.Spec.Metadata.Template, MetadataRules, field.NewPath("spec", "metadata", "template")},
					{i.Spec.Gateway.Template, GatewayRules, field.NewPath("spec", "gateway", "template")},
				}
			}
			for _, s := range sites {
				if s.tpl == nil {
					continue
				}
				templates++
				errs := Validate(s.tpl, s.rules, s.path)
				errs = append(errs, CheckPodSecurity(s.tpl, v1beta1.PodSecurity{}, s.path)...)
				for _, e := range errs {
					t.Errorf("%s %s %s: %v", filepath.Base(f), meta.Kind, meta.Metadata.Name, e)
				}
			}
		}
	}
	// engine-tuned-config, engine-pinned-image, the class and its engine,
	// instance-external-postgres's metadata and gateway, namespaced-starter's
	// engine.
	if templates != 7 {
		t.Errorf("checked %d templates, want 7: a fixture was lost", templates)
	}
}
