package main

import (
	"fmt"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/firebolt-db/firebolt-crossplane/apis/v1alpha1"
)

// dns1035Label is apimachinery's DNS-1035 label format: Service names are
// such labels, and every claim that names composed objects names a Service.
const dns1035Label = "^[a-z]([-a-z0-9]*[a-z0-9])?$"

// NameRules are the CEL rules on a claim's metadata.name. They sit at the
// root of the schema, the only place CEL may read metadata.name, which
// Crossplane copies to both the claim's and the composite's CRD. They hold
// only for the claim kind: the composite is named <claim>-<5 random
// characters> by Crossplane, and its own name is never used for an object.
// They are checked on create only (optionalOldSelf): a name cannot change,
// and a claim admitted under older rules must still take its finalizer
// updates and be deleted.
func NameRules(l v1alpha1.ClaimNameLimit) []extv1.ValidationRule {
	guard := fmt.Sprintf("oldSelf.hasValue() || self.kind != '%s' || ", l.Claim)
	return []extv1.ValidationRule{
		{
			Rule:            guard + fmt.Sprintf("size(self.metadata.name) <= %d", l.MaxLength),
			Message:         l.Message(),
			FieldPath:       ".metadata.name",
			Reason:          ptr.To(extv1.FieldValueInvalid),
			OptionalOldSelf: ptr.To(true),
		},
		{
			Rule: guard + fmt.Sprintf("self.metadata.name.matches('%s')", dns1035Label),
			Message: fmt.Sprintf("a %s name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter and ending with a letter or digit): it names %s",
				l.Claim, l.NamesWhat()),
			FieldPath:       ".metadata.name",
			Reason:          ptr.To(extv1.FieldValueInvalid),
			OptionalOldSelf: ptr.To(true),
		},
	}
}
