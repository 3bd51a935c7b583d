package instance

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// existingDatabase decides what to do while the internal credentials Secret
// is not observed as composed: on the first calls of a new instance, or
// after someone deleted it. PostgreSQL keeps the password its data
// directory was initialised with, so a new password is minted only when no
// database can exist: no PostgreSQL StatefulSet and no volume claim (the
// StatefulSet is rendered only once its Secret exists, so either one
// without the Secret means the Secret was lost). A Secret found by name
// (restored by the user) is adopted as it is.
//
// It returns the Secret to reproduce, nil to mint one, or why PostgreSQL
// must stop short. Messages name objects and keys, never values.
func (c *computation) existingDatabase() (*composed.Unstructured, *blocked) {
	n, ns := c.n, c.n.namespace
	// Asked on every call while the Secret is not composed, so that a
	// restored Secret, or a volume that goes away, is seen.
	c.plan.Requirements[reqPostgresCredentials] = &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "Secret", Namespace: &ns,
		Match: &fnv1.ResourceSelector_MatchName{MatchName: n.postgresCredentials()},
	}
	c.plan.Requirements[reqPostgresVolume] = &fnv1.ResourceSelector{
		ApiVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: &ns,
		Match: &fnv1.ResourceSelector_MatchName{MatchName: n.postgresVolume()},
	}

	e := c.in.Existing
	_, sts := c.in.Observed[RNPostgres]
	switch {
	case !e.Resolved:
		return nil, &blocked{reason: ReasonProvisioning, message: fmt.Sprintf(
			"waiting for Crossplane to look for an existing PostgreSQL credentials Secret %q and volume claim %q", n.postgresCredentials(), n.postgresVolume())}
	case e.Secret != nil:
		if owner := foreignController(e.Secret, string(c.in.XR.UID)); owner != "" {
			return nil, &blocked{reason: ReasonPostgresEnsureFailed, message: fmt.Sprintf(
				"PostgreSQL credentials Secret %q is controlled by %s, not by this instance: if it is left over from a deleted instance, it goes with it; otherwise delete it", n.postgresCredentials(), owner)}
		}
		return e.Secret, nil
	case sts || e.Volume != "":
		holder := fmt.Sprintf("PostgreSQL StatefulSet %q", n.postgres())
		discard := fmt.Sprintf("delete StatefulSet %q (its volume claim goes with it)", n.postgres())
		if !sts {
			holder = fmt.Sprintf("PostgreSQL volume claim %q", e.Volume)
			discard = fmt.Sprintf("delete PersistentVolumeClaim %q", e.Volume)
		}
		return nil, &blocked{reason: ReasonPostgresEnsureFailed, message: fmt.Sprintf(
			"PostgreSQL credentials Secret %q is missing while %s still holds the database, which keeps the password it was initialised with; a new password would lock the metadata service out, so none is generated. "+
				"Restore the Secret from a backup in namespace %q (type Opaque, keys %s=%s, %s, %s=%s) and the instance picks it up; to discard the database instead, %s",
			n.postgresCredentials(), holder, ns, KeyUsername, postgresUser, KeyPassword, KeyDatabase, postgresDatabase, discard)}
	default:
		return nil, nil
	}
}

// foreignController names the controller of o when it is not the composite
// with UID uid; empty when o has no controller or it is that composite.
func foreignController(o *composed.Unstructured, uid string) string {
	for _, r := range o.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller && string(r.UID) != uid {
			return fmt.Sprintf("%s %s", r.Kind, r.Name)
		}
	}
	return ""
}
