package engine_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/firebolt-db/firebolt-crossplane/fn/contract"
	"github.com/firebolt-db/firebolt-crossplane/fn/engine"
)

// adoptingRequest makes req, a new engine's first call, the first call of
// a claim a migration made, asking to adopt generation 0. With live,
// Crossplane hands in the original's generation 0 as the migration left
// it: the stable request's objects of generation 0, without an owner or
// any of Crossplane's metadata.
func adoptingRequest(t *testing.T, gen string, live bool) func(*fnv1.RunFunctionRequest) {
	t.Helper()
	stable := loadRequest(t, "stable")
	return func(req *fnv1.RunFunctionRequest) {
		md := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue()
		md.Fields["annotations"] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			contract.AnnotationAdoptGeneration: structpb.NewStringValue(gen),
			contract.AnnotationMigratedFrom:    structpb.NewStringValue(contract.MigratedFromOriginal),
		}})
		if !live {
			return
		}
		for requirement, name := range map[string]string{
			engine.RequirementAdoptStatefulSet: "g0-statefulset",
			engine.RequirementAdoptHeadless:    "g0-headless",
			engine.RequirementAdoptConfig:      "g0-config",
		} {
			o := proto.Clone(stable.GetObserved().GetResources()[name].GetResource()).(*structpb.Struct)
			m := o.GetFields()["metadata"].GetStructValue()
			delete(m.GetFields(), "ownerReferences")
			if ann := m.GetFields()["annotations"].GetStructValue(); ann != nil {
				delete(ann.GetFields(), "crossplane.io/composition-resource-name")
			}
			if l := m.GetFields()["labels"].GetStructValue(); l != nil {
				for k := range l.GetFields() {
					if k != "firebolt.io/engine" && k != "firebolt.io/generation" {
						delete(l.GetFields(), k)
					}
				}
			}
			req.RequiredResources[requirement] = &fnv1.Resources{Items: []*fnv1.Resource{{Resource: o}}}
		}
	}
}
