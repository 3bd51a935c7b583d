package apis_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	xv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
)

var xrdFiles = map[string]string{
	"FireboltEngine":      "xfireboltengines.yaml",
	"FireboltEngineClass": "xfireboltengineclasses.yaml",
	"FireboltInstance":    "xfireboltinstances.yaml",
	"PhasedRollout":       "xphasedrollouts.yaml",
}

// servers holds, per claim kind, the API server for the claim CRD and for
// the composite CRD that Crossplane derives from the generated XRD.
type servers struct {
	claim, composite *server
}

var (
	serversMu  sync.Mutex
	allServers = map[string]servers{}
)

// serversFor builds the servers of a kind once; compiling the CEL rules of
// a CRD is the slow part of these tests.
func serversFor(t *testing.T, claimKind string) servers {
	t.Helper()
	serversMu.Lock()
	defer serversMu.Unlock()
	if s, ok := allServers[claimKind]; ok {
		return s
	}
	f, ok := xrdFiles[claimKind]
	if !ok {
		t.Fatalf("no XRD for claim kind %s", claimKind)
	}
	composite, claim := crdsFor(t, withUID(loadXRD(t, f)))
	s := servers{claim: newServer(t, claim), composite: newServer(t, composite)}
	allServers[claimKind] = s
	return s
}

// withUID gives an XRD the UID the API server would, which the derived
// CRDs' owner references need.
func withUID(xrd *xv1.CompositeResourceDefinition) *xv1.CompositeResourceDefinition {
	xrd.SetUID(types.UID("00000000-0000-0000-0000-000000000001"))
	return xrd
}

// TestCRDsAreAccepted creates the CRDs Crossplane derives from each XRD, as
// the API server would: structural schema, CEL compilation and the CEL
// cost budgets (per rule and per CRD) included.
func TestCRDsAreAccepted(t *testing.T) {
	for _, f := range xrdFiles {
		t.Run(f, func(t *testing.T) {
			composite, claim := crdsFor(t, withUID(loadXRD(t, f)))
			for _, crd := range []*extv1.CustomResourceDefinition{composite, claim} {
				if diff := cmp.Diff([]string(nil), validateCRD(t, crd)); diff != "" {
					t.Errorf("creating CRD %s: -want no errors, +got:\n%s", crd.GetName(), diff)
				}
			}
		})
	}
}

// TestXRDs pins everything about each XRD but its schema.
func TestXRDs(t *testing.T) {
	names := func(kind, plural, short string) extv1.CustomResourceDefinitionNames {
		return extv1.CustomResourceDefinitionNames{
			Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind),
			ShortNames: []string{short}, Categories: []string{"firebolt"},
		}
	}
	col := func(name, typ, path string) extv1.CustomResourceColumnDefinition {
		return extv1.CustomResourceColumnDefinition{Name: name, Type: typ, JSONPath: path}
	}
	legacy := xv1.CompositeResourceScopeLegacyCluster
	groupOf := func(kind string) string {
		if kind == "PhasedRollout" {
			return "sts.plus"
		}
		return "compute.firebolt.io"
	}
	spec := func(kind, plural, short string, cols ...extv1.CustomResourceColumnDefinition) xv1.CompositeResourceDefinitionSpec {
		n := names("X"+kind, "x"+plural, "x"+short)
		return xv1.CompositeResourceDefinitionSpec{
			Group:                 groupOf(kind),
			Names:                 n,
			Scope:                 &legacy,
			ClaimNames:            ptr.To(names(kind, plural, short)),
			DefaultCompositionRef: &xv1.CompositionReference{Name: n.Plural + "." + groupOf(kind)},
			Versions: []xv1.CompositeResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Referenceable: true, AdditionalPrinterColumns: cols,
			}},
		}
	}
	want := map[string]xv1.CompositeResourceDefinitionSpec{
		"FireboltEngine": spec("FireboltEngine", "fireboltengines", "fireng",
			col("REPLICAS", "integer", ".spec.replicas"),
			col("PHASE", "string", ".status.phase"),
			col("GENERATION", "integer", ".status.activeGeneration")),
		"FireboltEngineClass": spec("FireboltEngineClass", "fireboltengineclasses", "firengc",
			col("BOUND", "integer", ".status.boundEngines")),
		"FireboltInstance": spec("FireboltInstance", "fireboltinstances", "fire",
			col("PHASE", "string", ".status.phase"),
			col("GATEWAY", "boolean", ".status.gatewayReady"),
			col("METADATA", "boolean", ".status.metadataReady")),
		"PhasedRollout": spec("PhasedRollout", "phasedrollouts", "phr",
			col("TARGET", "string", ".spec.targetRef"),
			col("PHASE", "string", ".status.phase"),
			col("PARTITION", "integer", ".status.rollingPodStatus.partition"),
			col("STEP", "string", ".status.rollingPodStatus.status"),
			col("REVISION", "string", ".status.updateRevision"),
			col("AGE", "date", ".metadata.creationTimestamp")),
	}
	for kind, f := range xrdFiles {
		t.Run(kind, func(t *testing.T) {
			xrd := loadXRD(t, f)
			if diff := cmp.Diff("apiextensions.crossplane.io/v1, Kind=CompositeResourceDefinition", xrd.GroupVersionKind().String()); diff != "" {
				t.Errorf("kind: -want, +got:\n%s", diff)
			}
			if diff := cmp.Diff("x"+strings.ToLower(kind)+map[bool]string{true: "es", false: "s"}[strings.HasSuffix(kind, "Class")]+"."+groupOf(kind), xrd.GetName()); diff != "" {
				t.Errorf("name: -want, +got:\n%s", diff)
			}
			got := xrd.Spec
			got.Versions = append([]xv1.CompositeResourceDefinitionVersion(nil), got.Versions...)
			for i := range got.Versions {
				got.Versions[i].Schema = nil
			}
			if diff := cmp.Diff(want[kind], got); diff != "" {
				t.Errorf("spec without schema: -want, +got:\n%s", diff)
			}
		})
	}
}

// TestPodTemplateSchemas checks the patches on every embedded pod template:
// metadata keeps unknown fields, containers are not required, and no
// upstream description is left below the template.
func TestPodTemplateSchemas(t *testing.T) {
	templates := map[string][]string{
		"FireboltEngine":      {"spec.template"},
		"FireboltEngineClass": {"spec.template"},
		"FireboltInstance":    {"spec.metadata.template", "spec.gateway.template"},
	}
	for kind, paths := range templates {
		for _, p := range paths {
			t.Run(kind+"/"+p, func(t *testing.T) {
				s := schemaOf(t, xrdFiles[kind])
				for _, seg := range strings.Split(p, ".") {
					s = s.Properties[seg]
				}
				type shape struct {
					MetadataPreservesUnknown bool
					SpecRequired             []string
					ContainersMaxItems       int64
					Descriptions             []string
				}
				got := shape{
					MetadataPreservesUnknown: ptrTrue(s.Properties["metadata"].XPreserveUnknownFields),
					SpecRequired:             s.Properties["spec"].Required,
					ContainersMaxItems:       *s.Properties["spec"].Properties["containers"].MaxItems,
				}
				for name, c := range s.Properties {
					if name != "metadata" { // Our own description of the metadata node stays.
						got.Descriptions = append(got.Descriptions, descriptions(c, p+"."+name)...)
					}
				}
				want := shape{MetadataPreservesUnknown: true, ContainersMaxItems: 64}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("-want, +got:\n%s", diff)
				}
			})
		}
	}
}

func schemaOf(t *testing.T, file string) extv1.JSONSchemaProps {
	t.Helper()
	xrd := loadXRD(t, file)
	s := extv1.JSONSchemaProps{}
	if err := yaml.Unmarshal(xrd.Spec.Versions[0].Schema.OpenAPIV3Schema.Raw, &s); err != nil {
		t.Fatalf("cannot parse the schema of %s: %v", file, err)
	}
	return s
}

func ptrTrue(b *bool) bool { return b != nil && *b }

func descriptions(s extv1.JSONSchemaProps, path string) []string {
	var out []string
	if s.Description != "" {
		out = append(out, path)
	}
	for name, p := range s.Properties {
		out = append(out, descriptions(p, path+"."+name)...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		out = append(out, descriptions(*s.Items.Schema, path+"[]")...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		out = append(out, descriptions(*s.AdditionalProperties.Schema, path+"{}")...)
	}
	return out
}

// example reads a claim from examples/claims.
func example(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", "claims", file))
	if err != nil {
		t.Fatalf("cannot read example %s: %v", file, err)
	}
	return parse(t, string(b))
}
