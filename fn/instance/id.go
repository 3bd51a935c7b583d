package instance

import (
	"crypto/sha256"

	"github.com/oklog/ulid/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// instanceID is the metadata account id in use. spec.id wins; else the id
// already published in status stays (so it survives any change to how ids
// are derived); else one is derived from the composite's identity.
func instanceID(spec, published string, xr metav1.ObjectMeta) string {
	switch {
	case spec != "":
		return spec
	case published != "":
		return published
	default:
		return DeriveID(xr)
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
