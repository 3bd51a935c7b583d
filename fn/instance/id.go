package instance

import (
	"crypto/sha256"
	"fmt"

	"github.com/oklog/ulid/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonIDChangeRefused says spec.id names another account than the one in
// use, and is not applied.
const ReasonIDChangeRefused = "IDChangeRefused"

// instanceID is the metadata account id to use. An id published in status
// is in use: the metadata service serves that account and every engine of
// the instance finds its data there, so it stays even when spec.id names
// another one (refused then explains why). Before any id is published,
// spec.id wins, else one is derived from the composite's identity.
func instanceID(spec, published string, xr metav1.ObjectMeta) (id string, refused *blocked) {
	switch {
	case published != "" && spec != "" && spec != published:
		return published, &blocked{reason: ReasonIDChangeRefused, message: fmt.Sprintf(
			"spec.id %q is not applied: account %q (status.id) is in use, and switching accounts would hide every engine's data from the metadata service. "+
				"To keep the account, set spec.id to %q (this pins it) or remove spec.id; to use account %q, create a new FireboltInstance with that spec.id",
			spec, published, published, spec)}
	case published != "":
		return published, nil
	case spec != "":
		return spec, nil
	default:
		return DeriveID(xr), nil
	}
}

// DeriveID derives a ULID from a composite's identity without any state or
// randomness: the time part is the creation time, the entropy part the
// first 80 bits of SHA-256 of the UID (of the name when there is no UID, as
// in an offline render). Two composites never share a UID, so they never
// share an id, and every call for one composite agrees.
func DeriveID(xr metav1.ObjectMeta) string {
	seed := string(xr.UID)
	if seed == "" {
		seed = xr.Name
	}
	sum := sha256.Sum256([]byte(seed))
	var id ulid.ULID
	// Times before the epoch or past the year 10889 cannot occur for a
	// Kubernetes object; both setters only fail on such input.
	ms := uint64(0)
	if t := xr.CreationTimestamp.Time; !t.IsZero() && t.Unix() > 0 {
		ms = ulid.Timestamp(t)
	}
	_ = id.SetTime(ms)
	_ = id.SetEntropy(sum[:10])
	return id.String()
}
