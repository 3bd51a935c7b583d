package instance

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/firebolt-db/firebolt-crossplane/apis/input/v1beta1"
	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
)

// TestAdoptedNamesAreTheComposedOnes: every name kubectl firebolt migrate
// stamps on the original's objects is the composition resource name this
// function composes that object under.
func TestAdoptedNamesAreTheComposedOnes(t *testing.T) {
	cfg, err := (&v1beta1.Input{}).Resolve()
	if err != nil {
		t.Fatal(err)
	}
	in := Inputs{Claim: "demo", Namespace: "firebolt", CandidatePassword: "pw"}
	in.XR.Name, in.XR.UID = "demo-x7k2p", "5b7a2a3e-3c1f-4d5e-9a0b-1c2d3e4f5a6b"
	in.Existing.Resolved = true
	p, err := Compute(in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	secret := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: p.Resources[RNPostgresCredentials].Object}}
	in.Observed = map[resource.Name]*composed.Unstructured{RNPostgresCredentials: secret}
	if p, err = Compute(in, cfg); err != nil {
		t.Fatal(err)
	}
	for key, rn := range contract.InstanceAdoptedNames("demo") {
		d, ok := p.Resources[resource.Name(rn)]
		if !ok {
			t.Errorf("%s: the instance composes nothing under %q", key, rn)
			continue
		}
		u := unstructured.Unstructured{Object: d.Object}
		res, name, _ := strings.Cut(key, "/")
		if u.GetName() != name || strings.ToLower(u.GetKind())+"s" != res {
			t.Errorf("%s: the instance composes %s %s under %q", key, u.GetKind(), u.GetName(), rn)
		}
	}
}
