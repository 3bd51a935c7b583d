package apis_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	xv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
)

// The API server's own libraries, wired as its custom resource handler
// does: decode, prune unknown fields, drop nulls, default, then validate
// the schema and the CEL rules (with oldSelf on update).

// server validates objects of one CRD version the way the API server does.
type server struct {
	structural *structuralschema.Structural
	schema     validation.SchemaValidator
	cel        *cel.Validator
}

// Result of admitting an object: the object as stored, the unknown fields
// strict field validation reports, and the validation errors.
type Result struct {
	Object  map[string]any
	Unknown []string
	Errors  []string
}

// loadXRD reads a generated XRD.
func loadXRD(t *testing.T, file string) *xv1.CompositeResourceDefinition {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("definitions", file))
	if err != nil {
		t.Fatalf("cannot read %s: %v", file, err)
	}
	xrd := &xv1.CompositeResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, xrd); err != nil {
		t.Fatalf("cannot parse %s: %v", file, err)
	}
	return xrd
}

// crdsFor derives the composite and claim CRDs exactly as Crossplane does.
func crdsFor(t *testing.T, xrd *xv1.CompositeResourceDefinition) (composite, claim *extv1.CustomResourceDefinition) {
	t.Helper()
	composite, err := xcrd.ForCompositeResource(xrd)
	if err != nil {
		t.Fatalf("cannot derive the composite CRD of %s: %v", xrd.GetName(), err)
	}
	claim, err = xcrd.ForCompositeResourceClaim(xrd)
	if err != nil {
		t.Fatalf("cannot derive the claim CRD of %s: %v", xrd.GetName(), err)
	}
	return composite, claim
}

// internal converts a CRD to the API server's internal version, defaulted
// as the server defaults it on create.
func internal(t *testing.T, crd *extv1.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	t.Helper()
	in := crd.DeepCopy()
	extv1.SetObjectDefaults_CustomResourceDefinition(in)
	out := &apiextensions.CustomResourceDefinition{}
	if err := extv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(in, out, nil); err != nil {
		t.Fatalf("cannot convert CRD %s: %v", crd.GetName(), err)
	}
	return out
}

// validateCRD returns what the API server would say when creating crd:
// structural schema, CEL compilation and CEL cost budgets included.
func validateCRD(t *testing.T, crd *extv1.CustomResourceDefinition) []string {
	t.Helper()
	return messages(crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal(t, crd)))
}

func newServer(t *testing.T, crd *extv1.CustomResourceDefinition) *server {
	t.Helper()
	in := internal(t, crd)
	// The internal version hoists a schema shared by all versions to
	// spec.validation.
	v := in.Spec.Validation
	if len(in.Spec.Versions) == 1 && in.Spec.Versions[0].Schema != nil {
		v = in.Spec.Versions[0].Schema
	}
	if v == nil || v.OpenAPIV3Schema == nil {
		t.Fatalf("CRD %s: no schema", crd.GetName())
	}
	s := v.OpenAPIV3Schema
	st, err := structuralschema.NewStructural(s)
	if err != nil {
		t.Fatalf("CRD %s: cannot build the structural schema: %v", crd.GetName(), err)
	}
	sv, _, err := validation.NewSchemaValidator(s)
	if err != nil {
		t.Fatalf("CRD %s: cannot build the schema validator: %v", crd.GetName(), err)
	}
	return &server{structural: st, schema: sv, cel: cel.NewValidator(st, true, celconfig.PerCallLimit)}
}

// admit creates obj, or updates old to obj when old is not nil.
func (s *server) admit(obj, old map[string]any) Result {
	unknown := pruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s.structural)
	structuraldefaulting.Default(obj, s.structural)
	if old != nil {
		pruning.Prune(old, s.structural, true)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(old, s.structural)
		structuraldefaulting.Default(old, s.structural)
	}

	var errs field.ErrorList
	if old == nil {
		errs = validation.ValidateCustomResource(nil, obj, s.schema)
	} else {
		errs = validation.ValidateCustomResourceUpdate(nil, obj, old, s.schema)
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	errs = append(errs, celErrs...)

	sort.Strings(unknown)
	return Result{Object: obj, Unknown: unknown, Errors: messages(errs)}
}

func messages(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}

// parse reads a YAML manifest into the form the API server works on.
func parse(t *testing.T, y string) map[string]any {
	t.Helper()
	m, err := decode(y)
	if err != nil {
		t.Fatalf("cannot parse manifest: %v\n%s", err, y)
	}
	return m
}

// decode reads YAML as the API server reads JSON: integers are int64.
func decode(y string) (map[string]any, error) {
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, utiljson.Unmarshal(j, &m)
}
